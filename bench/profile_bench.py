"""GPU: `cutegen profile` wall time beyond a verify run, and our classification vs Nsight Compute's own
SpeedOfLight rule for every example and for torch.matmul (the GEMM problem's reference). Copies the reports and
CSV exports to --save (the CI parser tests use such recordings).

    python bench/profile_bench.py --out profile.json --save DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from cutegen.harness.run import verify_kernel  # noqa: E402
from cutegen.profiler import profile_kernel  # noqa: E402
from gpu_session import engine, example_kernels  # noqa: E402

AGREES = {"latency": {"latency"}, "memory": {"memory", "high-throughput"}, "compute": {"compute", "high-throughput"},
          "balanced": {"balanced"}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    builder, worker, state = engine()
    kernels = example_kernels(args.only)
    cases = [(k, False) for k in kernels] + [(ROOT / "examples/gemm_bf16/gemm_bf16.cu", True)]
    rows = []
    for kernel, reference in cases:
        t = time.perf_counter()
        if not reference:
            verify_kernel(kernel, builder, worker, state_dir=state)
        verify_s = time.perf_counter() - t
        t = time.perf_counter()
        rec = profile_kernel(kernel, builder, worker, state_dir=state, reference=reference)
        profile_s = time.perf_counter() - t
        name = kernel.stem + (" (torch.matmul)" if reference else "")
        row = {"case": name, "verdict": rec.verdict, "message": rec.message, "profile_s": profile_s,
               "verify_s": verify_s, "stages_s": rec.details.get("stage_seconds")}
        if rec.verdict == "profiled":
            ours, theirs = rec.profile.bound, rec.details.get("ncu_rule")
            row.update(ours=ours, ncu_rule=theirs, agrees=theirs in AGREES.get(ours, set()), signals=rec.profile.signals)
            if args.save:
                dest = args.save / (kernel.stem + ("-reference" if reference else ""))
                dest.mkdir(parents=True, exist_ok=True)
                folder = Path(rec.profile.report).parent
                for f in folder.iterdir():
                    shutil.copy(f, dest / f.name)
                (dest / "problem.txt").write_text(kernel.with_suffix(".py").name)
        rows.append(row)
        print(f"{name:<26} {rec.verdict:<10} {profile_s:5.1f} s {row['stages_s']}  ours={row.get('ours')}  ncu={row.get('ncu_rule')}  "
              f"{rec.message}  signals={row.get('signals')}", flush=True)
    worker.stop()
    agree = [r for r in rows if "agrees" in r]
    print(f"classification agrees with ncu's SOL rule: {sum(r['agrees'] for r in agree)}/{len(agree)}")
    print(f"profile wall time: max {max(r['profile_s'] for r in rows):.1f} s (target ≤ 15 s beyond verify)")
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "date": time.strftime("%Y-%m-%d")}, indent=1, default=str))


if __name__ == "__main__":
    main()
