"""What the sandbox costs a candidate, as ratios against the same work outside it, interleaved in one process
(alternating who goes first), with the median of the paired ratios and its 95 % bootstrap interval.

- build (CPU): nvcc BUILD of the kernel from an empty cache, jailed vs not (the launcher, seccomp, cgroup);
- gate (CPU): the gate's host preprocessing (the build's own `gcc -E` step, jailed) ÷ the uncached check tier;
- run (GPU): 5 trials + timing with the build cached, in the jailed vs the unjailed worker, both warm;
  plus each worker's cold start. Target: jailed ÷ unjailed ≤ 1.05.

    python bench/sandbox_overhead.py --out sandbox_overhead.json [--rounds 10] [--builds 2] [--gate 3] [--cpu-only]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.harness.run import verify_kernel  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.sandbox import Jail, availability, cgroup, preprocess  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover, includes_torch  # noqa: E402

# A small problem (3.1 M elements): the two warm workers hold their GPU memory at once, and the KernelBench-size
# softsign (6.4 GB per tensor, with its baselines and rotated inputs ~60 GB a worker) ran the second out of
# memory on the H200. Fixed costs weigh more on a small problem, so its overhead is the conservative figure.
KERNEL = ROOT / "examples" / "softsign_tail" / "softsign_tail.cu"
PROBLEM = KERNEL.with_suffix(".py")


def ratio_summary(pairs: list[tuple[float, float]]) -> dict:
    """pairs of (jailed or measured, baseline) seconds from the same round → the median ratio, its 95 % bootstrap
    interval, and the medians of each side."""
    ratios = [a / b for a, b in pairs]
    rng = random.Random(0)
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return {"ratio": statistics.median(ratios), "ci95": [boot[50], boot[1949]], "rounds": len(ratios),
            "median_s": [statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs)],
            "all": [[round(a, 4), round(b, 4)] for a, b in pairs]}


def _alternate(r: int, first, second):
    return (first, second) if r % 2 == 0 else (second, first)


def build_overhead(toolchain, jail, rounds: int) -> dict:
    """Uncached BUILD tier of the kernel, jailed and not."""
    pairs = []
    for r in range(rounds):
        seconds = {}
        for name in _alternate(r, "sandboxed", "unsandboxed"):
            builder = Builder(toolchain, Settings(), Path(tempfile.mkdtemp()))
            builder.jail = jail if name == "sandboxed" else None
            t = time.perf_counter()
            result = builder.run(Tier.BUILD, KERNEL)
            assert result.ok and not result.cached, f"{name}: {result.raw_log[-400:]}"
            seconds[name] = time.perf_counter() - t
        pairs.append((seconds["sandboxed"], seconds["unsandboxed"]))
    return ratio_summary(pairs)


def gate_overhead(toolchain, jail, rounds: int) -> dict:
    """The gate's jailed host preprocessing of a candidate ÷ the uncached jailed check tier of the same text."""
    pairs, text = [], KERNEL.read_text()
    for r in range(rounds):
        candidate = text + f"\n// candidate {r} {time.time_ns()}\n"  # a new text: no cache hit for the check
        seconds = {}
        for name in _alternate(r, "gate", "check"):
            builder = Builder(toolchain, Settings(), Path(tempfile.mkdtemp()))
            builder.jail = jail
            t = time.perf_counter()
            if name == "check":
                assert builder.run(Tier.CHECK, KERNEL, candidate).ok
            else:
                source = Path(tempfile.mkdtemp()) / KERNEL.name
                source.write_text(candidate)
                flags = builder._flags(Tier.BUILD, KERNEL, includes_torch(candidate))
                done = preprocess.host_view([toolchain.nvcc, *flags], source, jail)
                assert done.preprocessed is not None, done.error
            seconds[name] = time.perf_counter() - t
        pairs.append((seconds["gate"], seconds["check"]))
    return ratio_summary(pairs)


def timed_verify(builder, worker, state) -> tuple[float, dict]:
    t = time.perf_counter()
    rec = verify_kernel(KERNEL, builder, worker, problem=PROBLEM, timing=True, state_dir=state)
    return time.perf_counter() - t, rec


def run_overhead(toolchain, jail, rounds: int) -> dict:
    state = Path(tempfile.mkdtemp())
    builder = Builder(toolchain, Settings(), state)
    plain, jailed = Worker(), Worker(jail=jail.with_paths(readonly=[state / "cache", PROBLEM]))
    cold, pairs = {}, []
    try:
        timed_verify(builder, plain, state)  # the build, cached for every later call (and bound into the jail)
        plain.stop()
        for name, worker in (("unsandboxed", plain), ("sandboxed", jailed)):
            cold[name], rec = timed_verify(builder, worker, state)
            assert rec.verdict == "pass", f"{name}: {rec.verdict}: {rec.message}"
        for r in range(rounds):
            seconds = {}
            for name, worker in _alternate(r, ("unsandboxed", plain), ("sandboxed", jailed)):
                seconds[name], rec = timed_verify(builder, worker, state)
                assert rec.verdict == "pass", f"{name}: {rec.verdict}: {rec.message}"
            pairs.append((seconds["sandboxed"], seconds["unsandboxed"]))
    finally:
        plain.stop()
        jailed.stop()
    return {**ratio_summary(pairs), "cold_start_s": cold, "cold_ratio": cold["sandboxed"] / cold["unsandboxed"]}


def _line(what: str, s: dict, names: tuple[str, str]) -> str:
    return (f"{what}: {names[0]} {s['median_s'][0]:.3f} s ÷ {names[1]} {s['median_s'][1]:.3f} s = {s['ratio']:.3f} "
            f"(95 % CI {s['ci95'][0]:.3f}-{s['ci95'][1]:.3f}, {s['rounds']} rounds)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--builds", type=int, default=2)
    ap.add_argument("--gate", type=int, default=3)
    ap.add_argument("--cpu-only", action="store_true", help="the build and gate parts only (no GPU needed)")
    args = ap.parse_args()
    found = availability()
    if not found.ok:
        sys.exit(f"no sandbox on this machine: {found.reason}")
    toolchain, jail = discover(Settings()), Jail(found.bwrap)
    result: dict = {"memory_cgroup": cgroup.memory_binds()}
    if args.builds:
        result["build"] = build_overhead(toolchain, jail, args.builds)
        print(_line("build (nvcc, uncached)", result["build"], ("sandboxed", "unsandboxed")))
    if args.gate:
        result["gate"] = gate_overhead(toolchain, jail, args.gate)
        print(_line("gate (host preprocessing) vs check tier", result["gate"], ("gate", "check")))
    if not args.cpu_only:
        result["run"] = run_overhead(toolchain, jail, args.rounds)
        run = result["run"]
        print(_line("verify, warm", run, ("sandboxed", "unsandboxed")) + " (target ≤ 1.05); cold start "
              f"{run['cold_start_s']['sandboxed']:.2f} s ÷ {run['cold_start_s']['unsandboxed']:.2f} s = "
              f"{run['cold_ratio']:.3f}")
    Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
