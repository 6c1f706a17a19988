"""A candidate's verify time in the sandbox ÷ outside it, interleaved in one process. Target: ≤ 5 % overhead.
- build: nvcc on the candidate, jailed vs not, each from an empty cache (CPU only: `--builds-only` runs here);
- run (GPU): 5 trials + timing with the build cached, in the jailed vs the unjailed worker, both warm;
  plus each worker's cold start.

    python bench/sandbox_overhead.py --out sandbox_overhead.json [--rounds 10] [--builds 2] [--builds-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.build import Builder, Tier  # noqa: E402
from cutegen.harness.run import verify_kernel  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.sandbox import Jail, availability  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

# A small problem (3.1 M elements): the two warm workers hold their GPU memory at once, and the KernelBench-size
# softsign (6.4 GB per tensor, with its baselines and rotated inputs ~60 GB a worker) ran the second out of
# memory on the H200. Fixed costs weigh more on a small problem, so its overhead is the conservative figure.
KERNEL = ROOT / "examples" / "softsign_tail" / "softsign_tail.cu"
PROBLEM = KERNEL.with_suffix(".py")


def timed_verify(builder, worker, state) -> tuple[float, dict]:
    t = time.perf_counter()
    rec = verify_kernel(KERNEL, builder, worker, problem=PROBLEM, timing=True, state_dir=state)
    return time.perf_counter() - t, rec


def build_overhead(toolchain, jail, rounds: int) -> dict:
    """Uncached BUILD tier of the kernel, jailed and not, alternating who goes first."""
    times: dict[str, list[float]] = {"unsandboxed": [], "sandboxed": []}
    settings = Settings()
    for r in range(rounds):
        for name in (["unsandboxed", "sandboxed"] if r % 2 == 0 else ["sandboxed", "unsandboxed"]):
            builder = Builder(toolchain, settings, Path(tempfile.mkdtemp()))
            builder.jail = jail if name == "sandboxed" else None
            t = time.perf_counter()
            result = builder.run(Tier.BUILD, KERNEL)
            assert result.ok and not result.cached, f"{name}: {result.raw_log[-400:]}"
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"median_s": med, "all_s": times, "overhead": med["sandboxed"] / med["unsandboxed"] - 1}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--builds", type=int, default=2)
    ap.add_argument("--builds-only", action="store_true", help="only the nvcc part (no GPU needed)")
    args = ap.parse_args()
    found = availability()
    if not found.ok:
        sys.exit(f"no sandbox on this machine: {found.reason}")
    toolchain = discover(Settings())
    build = build_overhead(toolchain, Jail(found.bwrap), args.builds) if args.builds else None
    if build:
        print(f"build (nvcc, uncached): unsandboxed {build['median_s']['unsandboxed']:.2f} s, sandboxed "
              f"{build['median_s']['sandboxed']:.2f} s → overhead {build['overhead']:+.1%}")
    if args.builds_only:
        Path(args.out).write_text(json.dumps({"build": build}, indent=2))
        return
    settings = Settings()
    state = Path(tempfile.mkdtemp())
    builder = Builder(toolchain, settings, state)
    jail = Jail(found.bwrap).with_paths(readonly=[state / "cache", PROBLEM])
    plain, jailed = Worker(), Worker(jail=jail)
    times: dict[str, list[float]] = {"unsandboxed": [], "sandboxed": []}
    cold = {}
    try:
        timed_verify(builder, plain, state)  # the build, cached for every later call (and bound into the jail)
        plain.stop()
        for name, worker in (("unsandboxed", plain), ("sandboxed", jailed)):
            cold[name], rec = timed_verify(builder, worker, state)
            assert rec["verdict"] == "pass", f"{name}: {rec['verdict']}: {rec['message']}"
        for r in range(args.rounds):  # interleaved, alternating who goes first
            order = [("unsandboxed", plain), ("sandboxed", jailed)][:: 1 if r % 2 == 0 else -1]
            for name, worker in order:
                seconds, rec = timed_verify(builder, worker, state)
                assert rec["verdict"] == "pass", f"{name}: {rec['verdict']}: {rec['message']}"
                times[name].append(seconds)
    finally:
        plain.stop()
        jailed.stop()
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {"build": build, "rounds": args.rounds, "median_s": med, "cold_start_s": cold, "all_s": times,
              "overhead": med["sandboxed"] / med["unsandboxed"] - 1,
              "cold_overhead": cold["sandboxed"] / cold["unsandboxed"] - 1}
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"verify, warm: unsandboxed {med['unsandboxed']:.3f} s, sandboxed {med['sandboxed']:.3f} s → overhead "
          f"{result['overhead']:+.1%} (target ≤ +5 %); cold start: {cold['unsandboxed']:.2f} s vs "
          f"{cold['sandboxed']:.2f} s ({result['cold_overhead']:+.1%})")


if __name__ == "__main__":
    main()
