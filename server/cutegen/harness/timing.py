"""Kernel timing the way a skeptic accepts it: CUDA events, warm-up, an L2 flush before every call, launches
amortized for short kernels, and every function timed in the same interleaved rounds, so each ratio has a
confidence interval (intervals.py) and baselines (eager, torch.compile) are measured on the same card state.

A round runs each function once as a block: `calls` back-to-back calls (more for shorter functions, up to
MAX_CALLS, so a block lasts about BLOCK_MS), each preceded by its own L2 flush and timed between its own pair
of events recorded on the stream. The flush is outside the events, so the call is timed on a cold L2 as before;
while the GPU flushes (and spins HOST_SLACK_MS after it), the host has already enqueued the call, so a short
kernel's launch latency is hidden (as it is in a program that keeps the GPU busy), and the GPU does not idle
between calls (no clock ramp between
trials: what made a ~40 µs kernel spread 37-86 % between runs with one event pair per synchronized call). The
functions' order rotates from round to round."""

from __future__ import annotations

import math
import statistics
import time
from typing import Callable

import torch

from cutegen import hardware
from cutegen.harness.calls import sleep_rate
from cutegen.harness.intervals import median_interval
from cutegen.records import Timing  # the record's type: what is measured is what is stored

BLOCK_MS = 2.0  # GPU time a round's block of one function aims at
MAX_CALLS = 32
HOST_SLACK_MS = 0.1  # a spin after each flush: torch.compile's guards alone take ~60 µs of host time per call


def time_cuda(fn: Callable[[], object], **kwargs) -> Timing:
    return time_interleaved({"fn": fn}, **kwargs)["fn"]


def time_interleaved(fns: dict[str, Callable[[], object]], *, warmup: int = 3, min_trials: int = 10,
                     max_trials: int = 100, budget_s: float = 2.0,
                     before_round: Callable[[int], None] | None = None,
                     handoff_ms: dict[str, float] | None = None) -> dict[str, Timing]:
    """Times several functions in interleaved rounds (min_trials..max_trials rounds, within `budget_s` of GPU time
    per function), one block of each per round. Each Timing carries its per-round medians (`block_ms`), in
    round order, so that two functions' ratio is taken round by round (records.RunRecord.speedup).
    `before_round(i)` runs before round i, outside every timed region (the judge draws fresh inputs there).
    `handoff_ms[name]`: what each of that function's intervals holds besides the call (a candidate process's
    hand-off between streams, measured before its code was loaded: remote.py), taken off every call."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    flush = torch.empty(max(256 << 20, 2 * l2), dtype=torch.uint8, device="cuda")
    host_ms = {name: _warm(fn, warmup) for name, fn in fns.items()}
    torch.cuda.synchronize()
    flush_ms = _timed(lambda: flush.zero_())
    # The GPU's head start over the host: each call's host work (guards, ctypes, a candidate process's round
    # trip) must be enqueued before the call's start event is reached, or the host's latency is timed.
    slack = {name: max(HOST_SLACK_MS, 2.0 * ms) for name, ms in host_ms.items()}
    calls = {name: _calls(_one(fn, flush, slack[name]), flush_ms + slack[name]) for name, fn in fns.items()}
    events = {name: [_pair() for _ in range(n)] for name, n in calls.items()}
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    blocks: dict[str, list[float]] = {name: [] for name in fns}
    names, spent, rounds = list(fns), 0.0, 0
    while rounds < max_trials and (rounds < min_trials or spent < budget_s * 1000 * len(fns)):
        if before_round is not None:
            before_round(rounds)
        for name in names[rounds % len(names):] + names[:rounds % len(names)]:
            block = _block(fns[name], events[name], flush, slack[name])
            offset = (handoff_ms or {}).get(name, 0.0)
            block = [max(t - offset, 1e-6) for t in block] if offset else block
            per_call[name] += block
            blocks[name].append(statistics.median(block))
            spent += sum(block) + len(block) * (flush_ms + slack[name])
        rounds += 1
    return {name: _summary(per_call[name], blocks[name], calls[name]) for name in fns}


def _warm(fn, calls: int) -> float:
    """Warm-up calls, and the median host time of one (what the call costs before the GPU sees it)."""
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times) if times else 0.0


def _pair():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _block(fn, pairs, flush, slack_ms: float = HOST_SLACK_MS) -> list[float]:
    slack = int(slack_ms * sleep_rate())
    for start, end in pairs:
        flush.zero_()  # a cold L2 for every call: no call is timed on the previous one's cache
        torch.cuda._sleep(slack)  # the host's head start: a call's host work (guards, ctypes) ends before its event
        start.record()
        fn()
        end.record()
    pairs[-1][1].synchronize()
    return [start.elapsed_time(end) for start, end in pairs]


def _one(fn, flush, slack_ms: float) -> float:
    """One call after a flush, synchronized: the estimate a block's size is chosen from."""
    return _block(fn, [_pair()], flush, slack_ms)[0]


def _timed(fn) -> float:
    start, end = _pair()
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def _calls(call_ms: float, flush_ms: float) -> int:
    return max(1, min(MAX_CALLS, math.ceil(BLOCK_MS / max(call_ms + flush_ms, 1e-3))))


def _summary(times: list[float], blocks: list[float], calls: int) -> Timing:
    ordered = sorted(times)
    med = statistics.median(ordered)
    p10, p90 = ordered[len(ordered) // 10], ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)]
    low, high = median_interval(blocks)
    return Timing(med, p10, p90, (p90 - p10) / med if med else 0.0, len(ordered), low_ms=low, high_ms=high,
                  calls_per_block=calls, block_ms=blocks)


def throughput(seconds: float, nbytes: int, flops: int | None, dtype: str, gpu: hardware.Gpu | None = None) -> dict:
    """Achieved GB/s and TFLOP/s, and their share of `gpu`'s ceilings (hardware.py; the GPU running this by
    default). A card not in the table gets the rates without shares."""
    gpu = gpu or hardware.by_name(torch.cuda.get_device_name() if torch.cuda.is_available() else None)
    out: dict = {"bytes": nbytes, "gb_per_s": nbytes / seconds / 1e9}
    if gpu is not None:
        out.update(gpu=gpu.name, ceiling_source=gpu.source, bandwidth_ceiling=gpu.copy_bandwidth,
                   bandwidth_share=nbytes / seconds / gpu.copy_bandwidth)
    if flops:
        out.update(flops=flops, tflop_per_s=flops / seconds / 1e12, math=dtype)
        if gpu is not None:
            out.update(compute_ceiling=gpu.matmul_peak(dtype), compute_share=flops / seconds / gpu.matmul_peak(dtype))
    return out
