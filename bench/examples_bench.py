"""GPU: every example's time, bandwidth or TFLOP/s, % of the measured H200 ceilings, and speedups over
eager PyTorch and torch.compile, all measured in the same run. Also the run-to-run spread of the median.

    python bench/examples_bench.py --out examples.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from cutegen.harness.run import verify_kernel  # noqa: E402
from gpu_session import engine, example_kernels  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    builder, worker, state = engine()
    kernels = example_kernels(args.only)
    rows = []
    for k in kernels:
        rec = verify_kernel(k, builder, worker, timing=True, baselines=("eager", "compile"), state_dir=state)
        rows.append({"example": k.stem, **_figures(rec)})
        _print_row(rows[-1])
    spread = _median_spread(ROOT / "examples/softsign/softsign.cu", builder, worker, state)
    print(f"run-to-run spread of the softsign median over 3 runs: {spread:.2%} (target ≤ 2 %)")
    worker.stop()
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "median_spread_softsign": spread,
                                        "date": time.strftime("%Y-%m-%d")}, indent=1, default=str))


def _figures(rec) -> dict:
    """The row's figures, as examples.json has always held them (the worker's layout)."""
    return {"verdict": rec.verdict, "message": rec.message, "timing": rec.timing and rec.timing.to_json(),
            "throughput": rec.throughput and asdict(rec.throughput),
            **{key: t.to_json() for key, t in rec.baselines.items()},
            "speedup_vs_eager": rec.speedup("eager"), "speedup_vs_compile": rec.speedup("torch_compile"),
            "suspicious": rec.suspicious}


def _print_row(r: dict) -> None:
    if r["verdict"] != "pass":
        print(f"{r['example']:<14} {r['verdict']}: {r['message']}")
        return
    t, tp = r["timing"], r["throughput"]
    extra = f"{tp['tflop_per_s']:.0f} TFLOP/s ({tp['compute_share']:.0%} of peak)" if tp.get("tflop_per_s") is not None else \
        f"{tp['gb_per_s']:.0f} GB/s ({tp['bandwidth_share']:.0%} of {tp['bandwidth_ceiling'] / 1e12:.2f} TB/s, {tp['gpu']})"
    print(f"{r['example']:<14} {t['median_ms']:8.3f} ms ±{t['spread']:.1%}  {extra}  "
          f"vs eager {r['speedup_vs_eager']:.2f}×  vs torch.compile {r['speedup_vs_compile']:.2f}×", flush=True)


def _median_spread(kernel: Path, builder, worker, state) -> float:
    medians = []
    for _ in range(3):
        rec = verify_kernel(kernel, builder, worker, timing=True, state_dir=state)
        medians.append(rec.timing.median_ms)
    return (max(medians) - min(medians)) / min(medians)


if __name__ == "__main__":
    main()
