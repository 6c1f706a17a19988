"""GPU: the harness's kernel time ÷ Nsight Compute's gpu__time_duration for the same kernel and inputs.

    python bench/ncu_agreement.py [--example softsign] [--out ncu.json]

Both sides start each launch with a cold L2 (the harness flushes; ncu's default cache control flushes).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


def drive(library: str, problem: str, launches: int, timed: bool) -> float | None:
    import torch

    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.problem import load_problem
    from cutegen.harness.timing import time_cuda

    p, lib = load_problem(problem), KernelLibrary(library)
    torch.manual_seed(0)
    with torch.device("cuda"):
        inputs = p.make_inputs()
    ref = p.make_model().cuda()(*inputs)
    out = [torch.empty_like(ref)]
    stream = torch.cuda.current_stream()
    if timed:
        return time_cuda(lambda: lib(inputs, out, stream), min_trials=30).median_ms
    codes = {lib(inputs, out, stream) for _ in range(launches)}
    torch.cuda.synchronize()
    print(f"driver: {launches} launches, return codes {codes}", file=sys.stderr)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", default="softsign")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--drive", nargs=2, help=argparse.SUPPRESS)  # internal: run under ncu
    args = ap.parse_args()
    if args.drive:
        drive(args.drive[0], args.drive[1], 10, timed=False)
        return
    from cutegen.build import Builder, Tier
    from cutegen.settings import Settings
    from cutegen.toolchain import discover

    kernel = ROOT / "examples" / args.example / f"{args.example}.cu"
    build = Builder(discover(Settings()), Settings(), Path(tempfile.mkdtemp())).run(Tier.BUILD, kernel)
    assert build.ok, build.raw_log
    names = [k.name for k in build.resources]
    harness_ms = drive(build.artifact, str(kernel.with_suffix(".py")), 0, timed=True)
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    regex = "|".join(names)
    cmd = [ncu, "--clock-control", "none", "-k", f"regex:{regex}", "--metrics", "gpu__time_duration.sum", "--csv",
           sys.executable, __file__, "--drive", build.artifact, str(kernel.with_suffix(".py"))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rows = [r for r in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        print("ncu gave no rows:\n" + proc.stdout[-3000:] + "\n--- stderr ---\n" + proc.stderr[-3000:])
        sys.exit(1)
    unit = rows[0]["Metric Unit"]
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "ns": 1e-6, "us": 1e-3, "ms": 1.0}.get(unit, 1e-6)
    ncu_ms = statistics.median(float(r["Metric Value"].replace(",", "")) * scale for r in rows)
    ratio = harness_ms / ncu_ms
    print(f"{args.example}: harness {harness_ms:.4f} ms, ncu gpu__time_duration {ncu_ms:.4f} ms ({len(rows)} launches)"
          f" → ratio {ratio:.3f} (target 0.95–1.05)")
    if args.out:
        args.out.write_text(json.dumps({"example": args.example, "harness_ms": harness_ms, "ncu_ms": ncu_ms,
                                        "ratio": ratio, "kernels": names}, indent=1))


if __name__ == "__main__":
    main()
