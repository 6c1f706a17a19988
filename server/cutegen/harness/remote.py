"""The judge's side of the process boundary: the candidate's code runs in a process of its own
(harness/candidate.py); the judge (the worker process: problem, reference, truth, comparison, clock, verdict)
calls it through `RemoteKernel`, which looks to the trials and the timing like any kernel library.

What crosses the boundary:
- buffers: the judge allocates every buffer the candidate may touch (its input copies and its outputs) apart
  from all its other memory — a private CUDA memory pool (an IPC handle opens a whole allocation segment, so a
  shared segment holds only shared buffers) or one shared file each on the CPU — and keeps the originals.
- calls: a pickled request down; a JSON reply up, checked field by field (`_checked`). A reply can say a call
  ran and its return code, or name a failure the candidate may own (`CANDIDATE_VERDICTS`); anything else —
  malformed, oversized, an unknown name, a reply to nothing — ends the run as `candidate-protocol`.
- order and time: on a GPU the judge records an interprocess event on its stream after writing the inputs; the
  candidate's stream waits for it, calls, and records its own events, which the judge's stream waits for. The
  judge's timing events sit on the judge's stream around that hand-off (harness/timing.py), so nothing in the
  candidate's process can shorten the interval; the hand-off can only lengthen it.

A dead candidate process is `crashed` (its exit code or signal), a silent one `timeout`; neither escapes as an
exception. A process is kept warm for the same code (path and content digest) across trials and requests, and a
new candidate text gets a new one (`Candidates`).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from cutegen.harness.verdicts import Failed, Mismatch, Verdict
from cutegen.sandbox.process import die_with_parent, stderr_fd

MAX_REPLY = 16 << 20
MAX_MESSAGE = 4000
# What a candidate's reply may name: failures its own code can cause. Never a pass, never a judge's verdict.
CANDIDATE_VERDICTS = frozenset({Verdict.MISMATCH, Verdict.LAZY_OUTPUT, Verdict.EXPANDED_OUTPUT,
                                Verdict.OUTPUT_ALIASES_INPUT, Verdict.CUDA_ERROR, Verdict.OUT_OF_MEMORY,
                                Verdict.BUILD_FAILED, Verdict.ERROR, Verdict.PROBLEM_ERROR})
LOAD_TIMEOUT = 900.0  # a ModelNew's load_inline build runs inside the load
CALL_TIMEOUT = 300.0


class CandidateProcess:
    """`python -m cutegen.harness.candidate`, a child of the judge that dies with it, spoken to over two pipes."""

    def __init__(self, device: str):
        self.device = device
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        self._popen = subprocess.Popen(
            [sys.executable, "-m", "cutegen.harness.candidate", "--read-fd", str(down_r), "--write-fd", str(up_w),
             "--device", device], pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL, stdout=stderr_fd(),
            stderr=stderr_fd(), preexec_fn=die_with_parent, env=_environment())
        os.close(down_r)
        os.close(up_w)
        self._down = Connection(down_w, readable=False)
        self._up = Connection(up_r, writable=False)
        self._events: dict = {}
        self.handoff_ms: float | None = None
        self.round_trip_s = 0.0  # an empty request's round trip, measured before any candidate code is loaded
        self.load_reply: dict | None = None  # the answer to its one `load`: a process holds one candidate's code
        self.asked = 0  # requests sent: what a verify costs in round trips (bench/judge_overhead.py reports it)
        self.pool = shared_pool() if device == "cuda" else None  # only buffers a candidate may see live there
        self.shared = Shared(device, self.pool)  # this process's buffers, reused from one request to the next
        self._connected = device != "cuda"

    def ready(self) -> "CandidateProcess":
        """The process connected: on a GPU its interprocess events opened and the hand-off calibrated. Asked for
        when it is first used, so a spare process boots (Python, torch, its CUDA context) while the judge works."""
        if not self._connected:
            self._open_events()
            self._connected = True
        return self

    def _open_events(self) -> None:
        """The interprocess events of every call: the judge's (`signal`: the inputs are written) and the
        candidate's two (`after_call`, `after_copy`), then the hand-off timed through them while the process
        runs only our code."""
        import torch

        judge = torch.cuda.Event(interprocess=True)
        reply = self.ask({"op": "events", "judge_event": bytes(judge.ipc_handle())})
        after_call, after_copy = _open_events(reply.get("events"))
        self._events = {"judge": judge, "after_call": after_call, "after_copy": after_copy}
        self.handoff_ms = _time_handoff(self)
        self.round_trip_s = _time_round_trip(self)

    def signal(self, stream) -> None:
        if self._events:
            self._events["judge"].record(stream)

    def wait(self, stream, which: str) -> None:
        if self._events:
            stream.wait_event(self._events[which])

    def ask(self, request: dict, timeout: float = CALL_TIMEOUT) -> dict:
        """The checked reply to `request`; a failure it names, a dead or silent process, or a malformed reply is
        raised as Failed (the process is stopped for every one but a named failure)."""
        self.asked += 1
        try:
            self._down.send_bytes(pickle.dumps(request))
            if not self._up.poll(timeout):
                self.stop()
                raise Failed(Verdict.TIMEOUT, f"the candidate process gave no answer within {timeout:.0f} s (it hangs)")
            raw = self._up.recv_bytes(MAX_REPLY)
        except (EOFError, OSError) as e:  # a dead process: a broken pipe either way, or a reply over the bound
            raise self._dead(e) from None
        reply = _checked(raw, request["op"])
        if not reply["ok"]:
            if reply["poisoned"]:
                self.stop()
            raise Failed(reply["verdict"], reply["message"], **reply["details"])
        return reply

    def _dead(self, cause: BaseException) -> Failed:
        if isinstance(cause, OSError) and "message length" in str(cause):  # over MAX_REPLY, or a forged header
            self.stop()
            return Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process sent a reply the judge does not take "
                                                      f"(a length over {MAX_REPLY >> 20} MB or a forged header)")
        try:
            code = self._popen.wait(10)
        except subprocess.TimeoutExpired:  # alive, with its end of the pipe closed
            code = None
        self.stop()
        how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 and -code in \
            signal.valid_signals() else f"exit code {code}"
        return Failed(Verdict.CRASHED, f"the candidate process died during the call ({how}): a host-side crash in "
                                       "the kernel library, or the candidate ended its own process")

    def alive(self) -> bool:
        return self._popen.poll() is None

    def stop(self) -> None:
        if self._popen.poll() is None:
            self._popen.kill()
        try:
            self._popen.wait(10)
        except subprocess.TimeoutExpired:
            pass
        for conn in (self._down, self._up):
            conn.close()
        self._events = {}
        self.shared.close()


def _checked(raw: bytes, op: str) -> dict:
    """The reply as the judge accepts it: a JSON object with the fields `op` may carry, of their types."""
    try:
        reply = json.loads(raw)
    except ValueError:
        raise Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process answered {op!r} with something that is not "
                                                 f"JSON ({raw[:60]!r})") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process answered {op!r} with {str(reply)[:80]!r}, "
                                                 "not a reply")
    if reply["ok"]:
        return _fields(reply, op)
    verdict = Verdict(reply["verdict"]) if reply.get("verdict") in {v.value for v in CANDIDATE_VERDICTS} else None
    message = reply.get("message")
    if verdict is None or not isinstance(message, str):
        raise Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process named a failure the judge does not take "
                                                 f"from it ({str(reply.get('verdict'))[:40]!r})")
    details: dict = {}
    if isinstance(reply.get("mismatch"), dict):
        details["mismatch"] = Mismatch.from_json({k: v for k, v in reply["mismatch"].items()
                                                  if isinstance(v, (str, int, float, list, type(None)))}).to_json()
    build = reply.get("build")
    if verdict is Verdict.BUILD_FAILED and isinstance(build, dict) and isinstance(build.get("log"), str) \
            and isinstance(build.get("diagnostics"), list):
        details["build"] = {"ok": False, "log": build["log"][:1 << 20],
                            "diagnostics": [d for d in build["diagnostics"] if isinstance(d, dict)][:50]}
    if isinstance(reply.get("traceback"), str):
        details["traceback"] = reply["traceback"][:MAX_MESSAGE]
    return {"ok": False, "verdict": verdict, "message": message[:MAX_MESSAGE], "details": details,
            "poisoned": reply.get("poisoned") is True}


# The fields a reply that ran may carry, and their types (bool is an int in Python: refused by name).
_FIELDS: dict[str, dict[str, type]] = {"call": {"code": int}, "load": {"abi_version": int}, "events": {"events": list}}


def _fields(reply: dict, op: str) -> dict:
    wanted = _FIELDS.get(op, {})
    wrong = sorted(k for k in reply if k != "ok" and (k not in wanted or not isinstance(reply[k], wanted[k])
                                                       or isinstance(reply[k], bool)))
    missing = sorted(k for k in wanted if k not in reply)
    if wrong or missing:
        raise Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process's reply to {op!r} is not one the judge "
                                                 f"accepts (fields {', '.join(wrong + missing)})")
    return reply


class Shared:
    """The buffers the candidate may touch, allocated apart from the judge's other memory, and the ids the
    candidate knows them by. Only buffers made here can be handed over (`ref` refuses any other tensor).

    One per candidate process, for its life: when a request ends its buffers are recycled, not freed, and the next
    request of the same code gets them back by shape and dtype, already open in the candidate's process. (Opening
    a CUDA IPC handle, and closing it, costs milliseconds a buffer; a verify allocates a dozen.) The candidate
    keeps its mappings of them; the values are the judge's to write before every call, as on the first request."""

    def __init__(self, device: str, pool=None):
        self.device = device
        self._pool = pool  # the CUDA memory pool the buffers come from (the judge's shared pool)
        self._files = tempfile.mkdtemp(prefix="cutegen-shared-") if device != "cuda" else None
        self._ours: dict[int, Any] = {}  # data_ptr -> the tensor made here (kept alive while shared)
        self._ids: dict[tuple, int] = {}
        self._free: dict[tuple, list] = {}  # (shape, dtype) -> buffers of an earlier request, free to hand out
        self._lent: list = []  # the buffers handed out since the last recycle

    def empty(self, shape, dtype):
        free = self._free.get((tuple(shape), dtype))
        t = free.pop() if free else self._allocate(tuple(shape), dtype)
        self._lent.append(t)
        return t

    def recycle(self) -> None:
        """The request ended: every buffer it was given is free for the next one."""
        for t in self._lent:
            self._free.setdefault((tuple(t.shape), t.dtype), []).append(t)
        self._lent = []

    def _allocate(self, shape: tuple, dtype):
        import torch

        if self.device == "cuda":
            with torch.cuda.use_mem_pool(self._pool):
                t = torch.empty(shape, dtype=dtype, device="cuda")
        else:
            if self._files is None:
                raise ValueError("a buffer asked of closed shared buffers (its candidate process was stopped)")
            nbytes = max(1, _numel(shape) * dtype.itemsize)
            path = os.path.join(self._files, f"b{len(self._ours)}")
            raw = torch.from_file(path, shared=True, size=nbytes, dtype=torch.uint8)
            t = raw[:_numel(shape) * dtype.itemsize].view(dtype).reshape(shape)
            t.cutegen_file = (path, nbytes)
        self._ours[t.data_ptr()] = t
        return t

    def empty_like(self, x):
        return self.empty(tuple(x.shape), x.dtype)

    def key(self, t) -> tuple:
        return (t.data_ptr(), t.dtype, tuple(t.shape), t.stride())

    def new_refs(self, tensors) -> dict[int, tuple]:
        """Descriptions of the tensors the candidate has not opened yet, by the ids they get."""
        refs = {}
        for t in tensors:
            if self.key(t) not in self._ids:
                self._ids[self.key(t)] = len(self._ids)
                refs[self._ids[self.key(t)]] = self._describe(t)
        return refs

    def id_of(self, t) -> int:
        return self._ids[self.key(t)]

    def _describe(self, t) -> tuple:
        base = self._ours.get(t.untyped_storage().data_ptr())
        if base is None:
            raise ValueError("a buffer not allocated by the judge's shared allocator cannot be handed to a candidate")
        if self.device == "cuda":
            from torch.multiprocessing.reductions import reduce_tensor

            return ("cuda", reduce_tensor(t))
        path, nbytes = base.cutegen_file
        offset = t.data_ptr() - base.untyped_storage().data_ptr()
        if offset:
            raise ValueError("a view into a shared buffer cannot be handed over")
        return ("file", path, nbytes, str(t.dtype).removeprefix("torch."), tuple(t.shape), t.stride())

    def close(self) -> None:
        self._ours.clear()
        self._ids.clear()
        self._free.clear()
        self._lent = []
        if self._files:
            for name in os.listdir(self._files):
                os.unlink(os.path.join(self._files, name))
            os.rmdir(self._files)
            self._files = None


class RemoteKernel:
    """A kernel library (or a ModelNew) loaded in a candidate process, called as the trials and the timing call
    any library: `lib(args, outs, stream) -> code`. Every buffer it is called with comes from `empty`. A library
    keeps nothing of a call, so it has no `release` (the trials ask for one only where it exists: a ModelNew's)."""

    def __init__(self, process: CandidateProcess, *, kind: str, path: str, init: list, seed: int):
        self.process, self.device, self.kind = process, process.device, kind
        self.shared = process.shared
        if process.load_reply is None:  # the code loads once per process (Candidates keys a process by it): the
            # next request of the same code finds its library open and its call structs built, as in-process
            process.load_reply = process.ask({"op": "load", "kind": kind, "path": path, "init": init, "seed": seed},
                                             timeout=LOAD_TIMEOUT)
        self.abi_version = process.load_reply["abi_version"]
        self._staged: dict | None = None
        self._staging: dict[int, list] = {}
        self._fingerprints: Any = None
        self._queued = False  # whether the candidate may have device work queued since it last synchronized

    def caller(self):
        """How the trials call it: on a GPU, staged and read in the candidate's own context (calls.ElsewhereCaller);
        either way "synchronized" also waits for the candidate's process."""
        from cutegen.harness.calls import ElsewhereCaller, HostCaller

        caller = ElsewhereCaller(self) if self.device == "cuda" else HostCaller()
        caller.peers.append(self.synchronize)
        return caller

    @property
    def handoff_ms(self) -> float | None:
        """What a call through the boundary adds to the judge's interval (judge stream -> candidate stream -> judge
        stream), calibrated when the process started, before any candidate code was loaded in it (_time_handoff;
        timing.py takes it off each call)."""
        return self.process.handoff_ms

    # -- what the trials and the timing call ------------------------------------------------------------

    def empty(self, shape, dtype):
        return self.shared.empty(shape, dtype)

    def empty_like(self, x):
        return self.shared.empty_like(x)

    def bind_init(self, values: list) -> None:
        self._queued = True
        self.process.ask({"op": "bind_init", "values": values})

    def __call__(self, inputs: list, outputs: list, stream) -> int:
        """A checked call: the judge's stream goes on once the outputs hold the call's result."""
        return self._call(inputs, outputs, stream, "after_copy")

    def timed_call(self, inputs: list, outputs: list, stream) -> int:
        """The same request (the candidate cannot tell them apart); the judge's stream waits for the call alone,
        not for a ModelNew's copy into the outputs."""
        return self._call(inputs, outputs, stream, "after_call")

    def _call(self, inputs: list, outputs: list, stream, then) -> int:
        import torch

        staged, self._staged = self._staged, None
        tensors = [x for x in (*inputs, *outputs) if isinstance(x, torch.Tensor)]
        if staged is not None:
            tensors += [t for pair in staged["pairs"] for t in pair] + [staged["fingerprints"]]
        refs = self.shared.new_refs(tensors)
        if refs:
            self.process.ask({"op": "share", "refs": refs})
        request: dict = {"op": "call", "outputs": [self.shared.id_of(o) for o in outputs],
                         "inputs": [("t", self.shared.id_of(x)) if isinstance(x, torch.Tensor) else ("v", x)
                                    for x in inputs]}
        if staged is not None:
            request["stage"] = {"pairs": [[self.shared.id_of(b), self.shared.id_of(v)] for b, v in staged["pairs"]],
                                "sleep": staged["sleep"], "fingerprints": self.shared.id_of(staged["fingerprints"])}
        self.process.signal(stream)
        self._queued = True
        code = self.process.ask(request)["code"]
        self.process.wait(stream, then)
        return code

    def stage_next(self, buffers: list, fresh: list, sleep_cycles: int, outputs: int) -> "Any":
        """The next call is staged as a program stages it, in the candidate's context: on its stream a sleep, then
        the fresh values copied into the input buffers, the call, and the outputs' fingerprints read right after
        (into a judge buffer, returned: calls.CudaCaller.consume reads it). The values come from staging buffers the
        judge fills now; on the judge's stream, ordered before the call by the judge's event."""
        import torch

        staging = self._staging.get(len(buffers))
        if staging is None or any(s.shape != f.shape or s.dtype != f.dtype for s, f in zip(staging, fresh)):
            staging = [self.shared.empty_like(f) for f in fresh]
            self._staging[len(buffers)] = staging
        for s, f in zip(staging, fresh):
            s.copy_(f)
        if self._fingerprints is None or self._fingerprints.numel() != outputs:
            self._fingerprints = self.shared.empty((outputs,), torch.int64)
        self._staged = {"pairs": list(zip(buffers, staging)), "sleep": sleep_cycles, "fingerprints": self._fingerprints}
        return self._fingerprints

    def synchronize(self) -> None:
        """The candidate's device work done too (the judge's own synchronize cannot see another process's). Asked
        only when it may have queued some since it last synchronized: on the CPU every call runs to its end before
        it answers, and an idle process has nothing to wait for. (This is for honest code: a candidate can redefine
        its own synchronize, so what orders the judge after its work is the events, never this request.)"""
        if self.device == "cuda" and self._queued:
            self.process.ask({"op": "sync"})
            self._queued = False

    def close(self) -> None:
        """Ends this judge's use: the candidate lets go of the loaded code's state (its process, with the shared
        buffers still open, may serve the next request of the same code), and the buffers are recycled."""
        if self.process.alive():
            try:
                self.process.ask({"op": "forget"})
            except Failed:
                pass
        self.shared.recycle()


class RemoteModelNew(RemoteKernel):
    """A ModelNew: its returned tensors, once its work is done, are copied into judge buffers on request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._final: list | None = None
        self._outs: list = []
        self._final_buffers: list = []  # every trial's returned values land in the same buffers (one mapping)

    def _call(self, inputs, outputs, stream, then) -> int:
        self._final, self._outs = None, outputs
        return super()._call(inputs, outputs, stream, then)

    @property
    def returned(self) -> list | None:
        """What forward returned, read after the candidate's device work is done (the trials ask after a sync)."""
        if not self._outs:
            return None
        if self._final is None:
            final = self._final_buffers
            if [(f.shape, f.dtype) for f in final] != [(o.shape, o.dtype) for o in self._outs]:
                final = self._final_buffers = [self.shared.empty_like(o) for o in self._outs]
                refs = self.shared.new_refs(final)
                if refs:
                    self.process.ask({"op": "share", "refs": refs})
            self.process.ask({"op": "final", "outputs": [self.shared.id_of(f) for f in final]})
            self._queued = False  # the candidate synchronized before it answered (candidate.op_final)
            self._final = final
        return self._final

    def release(self) -> None:
        """What forward returned let go of in the candidate: already done when the judge read it (`final`)."""
        if self._outs and self._final is None:
            self.process.ask({"op": "release"})
        self._final, self._outs = None, []


HANDOFF_CALLS = 30
CALIBRATION_US = 10  # a kernel about as short as the shortest a judge times (5-10 us on an H100)


def _time_handoff(process: CandidateProcess) -> float:
    """What a call through the process boundary adds to the judge's interval: a ~10 us kernel timed on the judge's
    own stream and through the candidate process (which runs only our code yet), interleaved; the difference of
    the medians. (Measured on an H100, 2026-12-07: 0.278 ms, the same within 1 us for 5 us, 50 us and 1 ms kernels;
    a hand-off that runs nothing reads 1 us longer, because part of it overlaps a kernel: bench/judge_handoff.py.)"""
    import statistics

    import torch

    from cutegen.harness.calls import judge_stream, sleep_rate

    stream = judge_stream()
    times: dict[str, list[float]] = {"local": [], "remote": []}
    rate = sleep_rate()
    slack, cycles = int(1.0 * rate), int(CALIBRATION_US / 1e3 * rate)  # 1 ms: the round trip is enqueued in time
    with torch.cuda.stream(stream):
        for i in range(2 * HANDOFF_CALLS):
            how = ("local", "remote")[i % 2]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(slack)
            start.record(stream)
            if how == "local":
                torch.cuda._sleep(cycles)
            else:
                process.signal(stream)
                process.ask({"op": "handoff", "cycles": cycles})
                process.wait(stream, "after_call")
            end.record(stream)
            end.synchronize()
            times[how].append(start.elapsed_time(end))
    return max(0.0, statistics.median(times["remote"]) - statistics.median(times["local"]))


ROUND_TRIPS = 15


def _time_round_trip(process: CandidateProcess) -> float:
    """The median seconds of an empty request, answered by our code alone: what every call's host time holds
    besides the candidate's own work (calls.ElsewhereCaller sizes its sleep on the rest)."""
    import statistics
    import time

    times = []
    for _ in range(ROUND_TRIPS):
        started = time.perf_counter()
        process.ask({"op": "noop"})
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _open_events(handles) -> tuple:
    import torch

    if not (isinstance(handles, list) and len(handles) == 2 and all(isinstance(h, str) and len(h) == 128
                                                                    for h in handles)):
        raise Failed(Verdict.CANDIDATE_PROTOCOL, "the candidate process did not send its two event handles")
    try:
        return tuple(torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), bytes.fromhex(h)) for h in handles)
    except (ValueError, RuntimeError) as e:
        raise Failed(Verdict.CANDIDATE_PROTOCOL, f"the candidate process's event handles do not open ({e})") from None


class Candidates:
    """The judge's candidate processes: one warm process for the code it last loaded (same kind, path and content
    digest; for a ModelNew also its init values and weight seed, which its module's import builds); anything else
    gets a new one, and the old one is stopped. On a GPU a spare process, which runs only our code, is started
    after a request that needed a new one, so the next new candidate does not wait for a process, torch and a CUDA
    context (about 2 s); it is connected (its hand-off calibrated) before the next timed request, so no process
    boots while a judge times (a request that only verifies does not wait for it)."""

    def __init__(self, *, spare: bool = True):
        self._key: tuple | None = None
        self._process: CandidateProcess | None = None
        self._spare: CandidateProcess | None = None
        self._keep_spare = spare

    @contextmanager
    def loaded(self, *, kind: str, path: str, device: str, init: list, seed: int, timed: bool = True):
        key = (kind, path, _digest(path), device) + ((repr(init), seed) if kind == "modelnew" else ())
        process = self._process
        fresh = self._key != key or process is None or not process.alive()
        if fresh or process is None:
            self.stop(spare=False)
            process = self._take_spare(device)
            self._process, self._key = process, key
        if timed:
            self._settle_spare()
        cls = RemoteModelNew if kind == "modelnew" else RemoteKernel
        lib = None
        try:
            lib = cls(process.ready(), kind=kind, path=path, init=init, seed=seed)
            yield lib
        except Failed as failed:
            if not self._drained() and device == "cuda":
                # Its process died (or would not finish) with work queued that the judge's stream may wait for:
                # that wait might never end, so the judge itself is restarted after this reply (Worker).
                failed.details["poisoned"] = True
            self.stop(spare=False)  # a candidate that failed is not reused: the next request starts clean
            raise
        finally:
            if lib is not None:
                lib.close()
            if fresh and device == "cuda" and self._keep_spare and self._spare is None:
                self._spare = CandidateProcess(device)

    def _take_spare(self, device: str) -> CandidateProcess:
        spare, self._spare = self._spare, None
        if spare is not None and spare.device == device and spare.alive():
            return spare
        if spare is not None:
            spare.stop()
        return CandidateProcess(device)

    def _settle_spare(self) -> None:
        """A spare still booting is waited for now, before the request's trials and timing (a boot beside the timed
        calls would share the host's cores and the GPU with them)."""
        if self._spare is None:
            return
        try:
            self._spare.ready()
        except Failed:  # it died while it booted: the next new candidate starts a process of its own
            self._spare.stop()
            self._spare = None

    def _drained(self) -> bool:
        """Whether the candidate process is alive and has finished every piece of device work it queued."""
        if self._process is None or not self._process.alive():
            return False
        try:
            self._process.ask({"op": "sync"}, timeout=30)
        except Failed:
            return False
        return True

    def stop(self, *, spare: bool = True) -> None:
        """The candidate's process stopped (and the spare, unless `spare` is False)."""
        if self._process is not None:
            self._process.stop()
        self._process, self._key = None, None
        if spare and self._spare is not None:
            self._spare.stop()
            self._spare = None


_POOL: list = []


def shared_pool():
    """One CUDA memory pool for every buffer this judge hands to a candidate, for the judge's life: its segments
    hold nothing else, and are reused from one candidate process to the next (a pool per process would keep each
    one's cached segments until an empty_cache, which waits for the device)."""
    import torch

    if not _POOL:
        _POOL.append(torch.cuda.MemPool())
    return _POOL[0]


def _digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _environment() -> dict:
    """The candidate's environment: the judge's, which is already the jail's allow-list inside a jail."""
    return dict(os.environ)


def seal_judge() -> None:
    """The judge process made non-dumpable: a process of the same user (its candidate) can then neither attach
    to it nor open its /proc/PID/mem, fd or environ entries. (Root, or a holder of CAP_SYS_PTRACE, still can:
    the jail drops every capability.)"""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass

