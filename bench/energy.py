"""GPU: energy per call as the judge measures it (harness/energy.py), and how well it repeats between processes.

Kernels: the softsign example (memory-bound, 6.4 GB per tensor), KernelBench Level 1 #1 (a 4096^3 fp32 matmul)
and the flagship bf16 GEMM (examples/gemm_bf16). Each is built once, then judged with timing in RUNS separate
judge processes (a fresh harness Worker each run, exactly as `cutegen bench` judges: the kernel in a candidate
process of its own, so each call's hand-off is in its J/call, docs/energy.md). Per run and kernel: J/call with its
95 % interval over the energy windows, mean power, SM clock, the counter's period, GPU ms per call in the windows
beside the timing's median. Across runs: the median J/call and the repeatability, max |run - median| / median as
± % (target ±3 %).

    python bench/energy.py [--runs 5] [--state DIR] [--kernels softsign.cu ...] --out energy.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.pairing import find_problem  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

KERNELS = [ROOT / "examples" / "softsign" / "softsign.cu",
           ROOT / "examples" / "kernelbench" / "level1" / "1_Square_matrix_multiplication_.cu",
           ROOT / "examples" / "gemm_bf16" / "gemm_bf16.cu"]
TARGET_PCT = 3.0
TIMEOUT_S = 600


def built(kernels: list[Path], builder: Builder) -> dict[Path, str]:
    out = {}
    for k in kernels:
        started = time.perf_counter()
        result = builder.run(Tier.BUILD, k)
        assert result.ok and result.artifact, [d.format() for d in result.errors]
        print(f"built {k.name} in {time.perf_counter() - started:.0f} s", flush=True)
        out[k] = str(result.artifact)
    return out


def one_run(libraries: dict[Path, str], run: int) -> dict[str, dict]:
    """Every kernel judged once with timing, in one fresh judge process."""
    worker = Worker()
    rows = {}
    try:
        for kernel, library in libraries.items():
            reply = worker.call({"problem": str(find_problem(kernel)), "library": library, "trials": 1, "seed": run,
                                 "timing": True, "baselines": []}, timeout=TIMEOUT_S)
            assert reply["verdict"] == "pass", reply
            rows[kernel.name] = {"energy": reply.get("energy"), "energy_unmeasured": reply.get("energy_unmeasured"),
                                 "median_ms": reply["timing"]["median_ms"], "handoff_ms": reply.get("handoff_ms")}
            print(f"run {run} {kernel.name:<40} {_row_text(rows[kernel.name])}", flush=True)
    finally:
        worker.stop()
    return rows


def _row_text(row: dict) -> str:
    e = row["energy"]
    if e is None:
        return row["energy_unmeasured"] or "energy not measured"
    return (f"{e['j_per_call'] * 1e3:.3f} mJ/call [{e['low_j'] * 1e3:.3f}-{e['high_j'] * 1e3:.3f}] {e['watts']:.0f} W "
            f"SM {e['sm_mhz'] or 0:.0f} MHz, {e['windows']} windows, period {e['period_ms']:.3g} ms, "
            f"{e['call_ms']:.4f} ms/call in the windows vs {row['median_ms']:.4f} ms timed "
            f"(hand-off {row['handoff_ms'] or 0:.3f} ms)")


def repeatability(values: list[float]) -> dict:
    """The runs' median and their farthest run from it, as ± % of the median."""
    med = statistics.median(values)
    pct = max(abs(v - med) for v in values) / med * 100 if med else float("nan")
    return {"median_j": med, "runs_j": values, "repeat_pct": pct, "target_pct": TARGET_PCT,
            "meets_target": pct <= TARGET_PCT}


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--state", type=Path, default=Path("/tmp/cutegen-energy-state"), help="build cache folder")
    ap.add_argument("--kernels", nargs="*", help="file names to keep")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = Settings(build_timeout=900)
    kernels = [k for k in KERNELS if not args.kernels or k.name in args.kernels]
    libraries = built(kernels, Builder(discover(settings), settings, args.state))
    runs = [one_run(libraries, r) for r in range(args.runs)]
    summary = {}
    for k in kernels:
        measured = [r[k.name]["energy"]["j_per_call"] for r in runs if r[k.name]["energy"]]
        why = runs[0][k.name]["energy_unmeasured"]
        summary[k.name] = repeatability(measured) if measured else {"energy_unmeasured": why}
        s = summary[k.name]
        if "median_j" in s:
            print(f"{k.name:<40} {s['median_j'] * 1e3:.3f} mJ/call over {len(measured)} runs, ±{s['repeat_pct']:.2f} % "
                  f"(target ±{TARGET_PCT} %: {'met' if s['meets_target'] else 'missed'})", flush=True)
        else:
            print(f"{k.name:<40} {s['energy_unmeasured']}", flush=True)
    result = {"gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"), "runs": runs, "summary": summary}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
