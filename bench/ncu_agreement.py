"""GPU: the harness's kernel time ÷ Nsight Compute's gpu__time_duration for the same kernel and inputs.

    python bench/ncu_agreement.py [--example softsign] [--out ncu.json]

Both sides see a cold L2 on every launch (the harness flushes; ncu's default cache control flushes). ncu
measures the calls inside the profiler driver's NVTX range, after warm-up, exactly like `cutegen profile`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.profiler.signals import NVTX_RANGE as RANGE  # noqa: E402
from cutegen.profiler.ncu_csv import parse_raw_csv, seconds  # noqa: E402
from cutegen.profiler.profile import find_ncu  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402


def harness_ms(library: str, problem: str) -> float:
    import torch

    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.problem import load_problem
    from cutegen.harness.timing import time_cuda

    p, lib = load_problem(problem), KernelLibrary(library)
    torch.manual_seed(0)
    with torch.device("cuda"):
        inputs = p.make_inputs()
    ref = p.make_model().cuda()(*inputs)
    out, stream = [torch.empty_like(ref)], torch.cuda.current_stream()
    return time_cuda(lambda: lib(inputs, out, stream), min_trials=30).median_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", default="softsign")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = Settings()
    tc = discover(settings)
    kernel = ROOT / "examples" / args.example / f"{args.example}.cu"
    problem = kernel.with_suffix(".py")
    build = Builder(tc, settings, Path(tempfile.mkdtemp())).run(Tier.BUILD, kernel)
    assert build.ok, build.raw_log
    ours = harness_ms(build.artifact, str(problem))
    ncu = find_ncu(None, tc.cuda_root)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    cmd = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", f"{RANGE}/", "--metrics",
           "gpu__time_duration.sum", "--csv", "--page", "raw", sys.executable, "-m", "cutegen.profiler.driver", "--problem",
           str(problem), "--library", build.artifact, "--calls", str(args.calls)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    rows = [r for r in parse_raw_csv(proc.stdout) if seconds(r) is not None]
    if not rows:
        print("ncu gave no rows:\n" + proc.stdout[-3000:] + "\n--- stderr ---\n" + proc.stderr[-3000:])
        sys.exit(1)
    theirs = statistics.median(seconds(r) for r in rows) * 1e3
    ratio = ours / theirs
    print(f"{args.example}: harness {ours:.4f} ms, ncu gpu__time_duration {theirs:.4f} ms ({len(rows)} launches)"
          f" → ratio {ratio:.3f} (target 0.95–1.05)")
    if args.out:
        args.out.write_text(json.dumps({"example": args.example, "harness_ms": ours, "ncu_ms": theirs,
                                        "ratio": ratio, "launches": len(rows)}, indent=1))


if __name__ == "__main__":
    main()
