"""Kernel timing the way a skeptic accepts it: CUDA events, warm-up, an L2 flush before every trial,
a median with its spread, and baselines (eager, torch.compile) measured the same way in the same run."""

from __future__ import annotations

import statistics
from typing import Callable

import torch

from cutegen import hardware
from cutegen.records import Timing  # the record's type: what is measured is what is stored


def time_cuda(fn: Callable[[], object], **kwargs) -> Timing:
    return time_interleaved({"fn": fn}, **kwargs)["fn"]


def time_interleaved(fns: dict[str, Callable[[], object]], *, warmup: int = 3, min_trials: int = 10,
                     max_trials: int = 100, budget_s: float = 2.0) -> dict[str, Timing]:
    """Times several functions round-robin, one trial of each per round, so that clock and thermal drift over
    the run falls on all of them alike (a kernel timed before its baseline would otherwise see a different
    card). `budget_s` is per function."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    flush = torch.empty(max(256 << 20, 2 * l2), dtype=torch.uint8, device="cuda")
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in fns}
    spent = 0.0
    rounds = 0
    while rounds < max_trials and (rounds < min_trials or spent < budget_s * 1000 * len(fns)):
        for name, fn in fns.items():
            flush.zero_()  # a cold L2 for every trial: no kernel is timed on the previous one's cache
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end))
            spent += times[name][-1] + 0.2
        rounds += 1
    return {name: _summary(t) for name, t in times.items()}


def _summary(times: list[float]) -> Timing:
    times = sorted(times)
    med = statistics.median(times)
    p10, p90 = times[len(times) // 10], times[min(len(times) - 1, (9 * len(times)) // 10)]
    return Timing(med, p10, p90, (p90 - p10) / med if med else 0.0, len(times))


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
