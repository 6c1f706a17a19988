"""GPU: how often NVML's total-energy counter moves, idle and under a busy matmul loop (2 s each), and the power
and SM clock it reports: the energy figures' windows must hold many of these updates (docs/energy.md).

    python bench/nvml_counter.py [--seconds 2] [--out nvml_counter.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def handle(pynvml, torch):
    """The NVML device of CUDA device 0, by UUID (CUDA_VISIBLE_DEVICES renumbers indices; UUIDs stay)."""
    try:
        return pynvml.nvmlDeviceGetHandleByUUID("GPU-" + str(torch.cuda.get_device_properties(0).uuid))
    except (pynvml.NVMLError, AttributeError):
        return pynvml.nvmlDeviceGetHandleByIndex(0)


def watch(pynvml, h, seconds: float, work) -> dict:
    changes, last, t0 = [], pynvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        work()
        now = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        if now != last:
            changes.append((time.perf_counter() - t0, now - last))
            last = now
    gaps = [1e3 * (b[0] - a[0]) for a, b in zip(changes, changes[1:])]
    return {"updates": len(changes), "gap_ms_median": statistics.median(gaps) if gaps else None,
            "gap_ms_min": min(gaps) if gaps else None, "gap_ms_max": max(gaps) if gaps else None,
            "mj_per_update_median": statistics.median(c[1] for c in changes) if changes else None,
            "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1e3,
            "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)}


def main() -> None:
    import pynvml
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    pynvml.nvmlInit()
    h = handle(pynvml, torch)
    a = torch.randn(8192, 8192, device="cuda")
    rows = {"idle": watch(pynvml, h, args.seconds, lambda: None)}
    rows["busy"] = watch(pynvml, h, args.seconds, lambda: a @ a)
    torch.cuda.synchronize()
    for name, row in rows.items():
        print(f"{name}: {row}", flush=True)
    if args.out:
        args.out.write_text(json.dumps({"gpu": torch.cuda.get_device_name(), **rows}, indent=1))


if __name__ == "__main__":
    main()
