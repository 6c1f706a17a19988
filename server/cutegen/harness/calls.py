"""The call as a PyTorch program makes it, and what it shows about stream order.

A program writes a kernel's inputs on its current stream and calls the kernel right away, with no device
synchronization; it reads the result on that stream right after the call returns. A kernel that does its work
on another stream must order that work after the caller's stream (its inputs) and the caller's stream after
the work (its result). The judge calls the same way, on a stream of its own (a pool stream, not the legacy
default stream, so a launch that ignores the stream it was given is unordered with it, as in a program that
uses `torch.cuda.stream`):

    poison the input and output buffers, synchronize          (the previous trial is over)
    on the caller's stream: sleep, then write the fresh inputs (a kernel that does not wait reads the poison)
    call the kernel
    on the caller's stream: read the outputs (a fingerprint)   (a result not ready yet is read unfinished)
    synchronize, fingerprint the outputs again                 (differs: the result was not ready)

The sleep makes "did not wait for its inputs" deterministic: it outlasts the host's time to make the call, so
work on an unordered stream starts while the inputs still hold NaN. `HostCaller` is the same protocol without
streams (CPU tensors: Python stand-in kernels in the tests, where every step runs in order).
"""

from __future__ import annotations

import time
from contextlib import nullcontext

import torch

FIRST_SLEEP_MS = 1.0  # before any call was timed (the first may load the kernel's module: it is not a sample)
MIN_SLEEP_MS, MAX_SLEEP_MS = 0.2, 20.0


class HostCaller:
    """Every step in program order at once: what a device without streams (the CPU) does."""

    device = "cpu"
    stream = None

    def __init__(self):
        self.peers: list = []  # what else "synchronized" waits for: a candidate process's own device work

    def current(self):
        return nullcontext()

    def sync(self) -> None:
        for peer in self.peers:
            peer()

    def stage(self, buffers: list, fresh: list) -> None:
        for b, f in zip(buffers, fresh):
            b.copy_(f)

    def consume(self, fn):
        """Caller-stream work whose value is read after `sync` (`value`)."""
        return fn()

    def value(self, pending):
        return _plain(pending)

    def called(self, host_seconds: float) -> None:
        pass


class CudaCaller(HostCaller):
    device = "cuda"

    def __init__(self):
        super().__init__()
        self.stream = judge_stream()
        self._cycles_per_ms = sleep_rate()
        self.sleep_ms = FIRST_SLEEP_MS
        self._calls = 0

    def current(self):
        return torch.cuda.stream(self.stream)

    def sync(self) -> None:
        super().sync()
        torch.cuda.synchronize()

    def stage(self, buffers: list, fresh: list) -> None:
        """On the caller's stream (current inside `current()`): a sleep, then the fresh values."""
        torch.cuda._sleep(int(self.sleep_ms * self._cycles_per_ms))
        super().stage(buffers, fresh)

    def consume(self, fn):
        return fn()  # torch ops on the current stream: enqueued, not waited for

    def called(self, host_seconds: float) -> None:
        """The next sleep outlasts this call's host time three times over (launch overheads vary). The first call
        is no sample: CUDA loads a kernel's module at its first launch, inside the call."""
        self._calls += 1
        if self._calls > 1:
            self.sleep_ms = min(MAX_SLEEP_MS, max(MIN_SLEEP_MS, 3e3 * host_seconds + 0.1))


class ElsewhereCaller(CudaCaller):
    """The same protocol where the kernel lives in another process (remote.RemoteKernel, `lib`): two processes'
    CUDA contexts take turns on the GPU rather than run side by side, so a sleep and the input writes on this
    process's stream would be over before any of the candidate's streams ran, and a kernel that does not wait for
    its inputs would never be seen. The staging and the read right after the call therefore happen on the
    candidate's stream, in its context (`lib.stage_next`)."""

    def __init__(self, lib):
        super().__init__()
        self.lib, self._outputs, self._pending = lib, 0, None

    def expect_outputs(self, n: int) -> None:
        self._outputs = n

    def called(self, host_seconds: float) -> None:
        """The sleep outlasts the candidate process's own time from the staged sleep to its call, which is all it
        must outlast (both are enqueued there): the pipe's round trip, measured when the process started, is taken
        off what the judge saw (sized on the whole round trip, the sleep counted the pipe three times over)."""
        super().called(max(0.0, host_seconds - self.lib.process.round_trip_s))

    def stage(self, buffers: list, fresh: list) -> None:
        self._pending = self.lib.stage_next(buffers, fresh, int(self.sleep_ms * self._cycles_per_ms), self._outputs)

    def consume(self, fn):
        pending, self._pending = self._pending, None
        return fn() if pending is None else pending.clone()  # the candidate's read, as this call saw it

    def value(self, pending):
        if isinstance(pending, torch.Tensor) and pending.dim() == 1:  # the candidate's fingerprints, one per output
            return [int(v) for v in pending.tolist()]
        return super().value(pending)


_STREAMS: dict[int, torch.cuda.Stream] = {}


def judge_stream() -> torch.cuda.Stream:
    """The caller's stream, one per device for the process's life: from PyTorch's pool (non-blocking, unordered
    with stream 0). Not a new one per verify: the caching allocator keeps freed blocks for the stream they were
    used on, and the pool hands out its 32 streams in turn, so a new stream per verify found no cached block,
    allocated every buffer afresh (9 cudaMallocs of up to 6.4 GB per softsign verify on the H200) and, once the
    card filled with other streams' blocks, freed them all and synchronized: 0.63 s against 0.47 s a verify."""
    device = torch.cuda.current_device()
    if device not in _STREAMS:
        _STREAMS[device] = torch.cuda.Stream()
    return _STREAMS[device]


def caller_for(device: str) -> HostCaller:
    return CudaCaller() if device == "cuda" else HostCaller()


_RATE: list[float] = []


def sleep_rate() -> float:
    """GPU clock cycles per millisecond of `torch.cuda._sleep`, measured once per process (timing.py uses it too)."""
    if not _RATE:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        cycles = 2_000_000
        torch.cuda._sleep(cycles // 10)  # warm
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        _RATE.append(cycles / max(start.elapsed_time(end), 1e-3))
    return _RATE[0]


def timed_call(fn):
    """fn() and the host seconds it took."""
    t = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t


def fingerprint(t: torch.Tensor) -> torch.Tensor:
    """A device scalar that changes when any bit of `t` changes: the sum of its words, wrapping (one pass over
    4-byte elements, in the dtype's own width so that nothing is cast and copied). Used where equality is all
    that matters: a result changed after it was read, outputs bit-identical to the previous trial's."""
    size = t.element_size()
    if size == 4:
        return t.view(torch.int32).sum(dtype=torch.int32)
    if size == 8:
        return t.view(torch.int64).sum(dtype=torch.int64)
    words = (t if t.is_contiguous() else t.contiguous()).reshape(-1)
    words = words.view(torch.int16) if size == 2 else words.view(torch.uint8)
    step = 1 << 24  # bounded int64 temporaries for the narrow dtypes
    parts = [words[i:i + step].sum(dtype=torch.int64) for i in range(0, words.numel(), step)]
    return torch.stack(parts).sum() if parts else torch.zeros((), dtype=torch.int64, device=t.device)


def fingerprints(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [fingerprint(t) for t in tensors]


def _plain(pending):
    if isinstance(pending, list):
        return [_plain(p) for p in pending]
    return int(pending) if isinstance(pending, torch.Tensor) else pending


def poison(t: torch.Tensor, *, inputs: bool = False) -> torch.Tensor:
    """NaN for floats. Integers: a large sentinel in outputs (unwritten elements stand out), 0 in inputs (an index
    read too early stays in bounds: a wrong result to judge, not an illegal address that kills the worker)."""
    if t.is_floating_point() or t.is_complex():
        return t.fill_(float("nan"))
    if inputs or t.dtype is torch.bool:
        return t.fill_(0)
    return t.fill_(-123456789 if t.dtype not in (torch.uint8, torch.int8) else 77)
