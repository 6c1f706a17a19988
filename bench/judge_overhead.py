"""GPU: the judge's own overhead -- a verify with the new checks (calls staged on a stream as a PyTorch program
makes them, fp64 truth, fingerprints, chunked comparison, stream attribution on failure) ÷ today's (the judge
before issue 24, frozen in bench/baseline_judge.py), both in this process on the same built kernel, interleaved
and repeated in ABBA rounds; the ratio's 95 % interval from the paired rounds (harness/intervals.py). Target <= 1.15x.

A verify here is judge(trials=5, timing=False) on a correct kernel: model and truth built, five trials, the verdict
(the worker's process start and the build are the same for both and left out). Kernels: the softsign example
(6.4 GB per tensor, memory-bound: the fp64 truth and the comparison dominate) and KernelBench L1 #12 (a diagonal
matmul whose reference is a dense 4096^3 fp32 matmul: the fp64 truth is a DGEMM).

    python bench/judge_overhead.py [--rounds 12] [--state DIR] --out judge_overhead.json
    python bench/judge_overhead.py --probe [--out probe.json]   # where the time goes (the first kernel only)

--probe answers why a verify's time is bimodal: per verify, the caching allocator's counters (device allocations
and frees, retries after a failed allocation: each frees every cached block and synchronizes), then the same
rounds with expandable segments (the allocator grows one mapping instead of new segments), then one cProfile of
each judge (the host time each function spends, GPU waits included: a sync is charged to whatever waits).
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
sys.path.insert(0, str(ROOT / "bench"))

import baseline_judge  # noqa: E402
from cutegen.build import Builder, Tier  # noqa: E402
from cutegen.harness import intervals  # noqa: E402
from cutegen.harness.abi import KernelLibrary  # noqa: E402
from cutegen.harness.gpu_checks import judge  # noqa: E402
from cutegen.harness.problem import load_problem  # noqa: E402
from cutegen.pairing import find_problem  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

KERNELS = [ROOT / "examples" / "softsign" / "softsign.cu",
           ROOT / "examples" / "kernelbench" / "level1" / "12_Matmul_with_diagonal_matrices_.cu"]
TARGET = 1.15


def seconds(fn) -> float:
    import torch

    torch.cuda.synchronize()
    t = time.perf_counter()
    verdict = fn()["verdict"]
    torch.cuda.synchronize()
    assert verdict == "pass", verdict
    return time.perf_counter() - t


def measure(kernel: Path, builder: Builder, rounds: int) -> dict:
    build = builder.run(Tier.BUILD, kernel)
    assert build.ok, [d.format() for d in build.errors]
    problem = load_problem(find_problem(kernel))
    lib = KernelLibrary(build.artifact)
    verify = {"new": lambda: judge(problem, lib, trials=5, seed=0, timing=False, baselines=[]),
              "before": lambda: baseline_judge.judge(problem, lib, trials=5, seed=0, timing=False, baselines=[])}
    for name in ("before", "new"):  # warm: CUDA context, cuBLAS handles, the allocator's pool; ends as a round does
        seconds(verify[name])
    # Every round is ABBA: a verify right after the other judge's pays for the allocator's switch between their
    # buffer patterns (H100, 6.4 GB tensors: ~+0.1 s for either judge), and in ABBA ABBA ... each judge runs once
    # right after the other and once right after itself in every round; the round's figure is its two runs' mean.
    # Pairs whose order alternated (AB BA) gave a bimodal ratio (0.905x and 1.287x) whose median fell on either
    # mode, and ABBA alternating with BAAB still gave one judge both switches in half the rounds (1.17x / 1.01x).
    times: dict[str, list[float]] = {"new": [], "before": []}
    for _ in range(rounds):
        took = {"new": 0.0, "before": 0.0}
        for name in ("new", "before", "before", "new"):
            took[name] += seconds(verify[name])
        for name, total in took.items():
            times[name].append(total / 2)
    median, low, high = intervals.ratio(times["new"], times["before"])
    row = {"kernel": kernel.name, "new_s": statistics.median(times["new"]), "before_s": statistics.median(times["before"]),
           "ratio": median, "ratio_low": low, "ratio_high": high, "rounds": rounds, "target": TARGET,
           "meets_target": high <= TARGET, "new_times_s": times["new"], "before_times_s": times["before"]}
    print(f"{kernel.name:<44} new {row['new_s']:.3f} s  before {row['before_s']:.3f} s  new/before {median:.3f}x "
          f"[{low:.3f}-{high:.3f}]  target <= {TARGET}  {'ok' if row['meets_target'] else 'OVER'}", flush=True)
    return row


ALLOCATOR_COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_sync_all_streams")


def probe(kernel: Path, builder: Builder, rounds: int) -> dict:
    import cProfile
    import io
    import pstats

    import torch

    build = builder.run(Tier.BUILD, kernel)
    assert build.ok, [d.format() for d in build.errors]
    problem = load_problem(find_problem(kernel))
    lib = KernelLibrary(build.artifact)
    verify = {"new": lambda: judge(problem, lib, trials=5, seed=0, timing=False, baselines=[]),
              "before": lambda: baseline_judge.judge(problem, lib, trials=5, seed=0, timing=False, baselines=[])}
    for fn in verify.values():
        seconds(fn)

    def counted(name: str, allocator: str) -> dict:
        before = torch.cuda.memory_stats()
        t = seconds(verify[name])
        after = torch.cuda.memory_stats()
        row = {"judge": name, "allocator": allocator, "s": t,
               **{k: after.get(k, 0) - before.get(k, 0) for k in ALLOCATOR_COUNTERS},
               "reserved_gb": torch.cuda.memory_reserved() / 1e9}
        print(f"  {allocator:<10} {name:<7} {t:.3f} s  " + "  ".join(f"{k.removeprefix('num_')} {row[k]}"
                                                               for k in ALLOCATOR_COUNTERS), flush=True)
        return row

    rows = []
    for allocator in ("default", "expandable"):
        if allocator == "expandable":
            torch.cuda.empty_cache()
            torch.cuda.memory._set_allocator_settings("expandable_segments:True")
            for fn in verify.values():
                seconds(fn)
        for r in range(rounds):
            for name in (("new", "before") if r % 2 == 0 else ("before", "new")):
                rows.append(counted(name, allocator))
    profiles = {}
    for name, fn in verify.items():
        profiler = cProfile.Profile()
        profiler.runcall(seconds, fn)
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        profiles[name] = text.getvalue()
        print(f"--- cProfile: {name} judge, by own time", flush=True)
        print(text.getvalue(), flush=True)
    return {"kernel": kernel.name, "rounds": rows, "profiles": profiles}


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12)  # under 6 the interval is the whole range
    ap.add_argument("--state", type=Path, default=Path("/tmp/cutegen-judge-state"), help="build cache folder")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--probe", action="store_true", help="where the first kernel's verify time goes (see above)")
    args = ap.parse_args()
    settings = Settings(build_timeout=600)
    builder = Builder(discover(settings), settings, args.state)
    if args.probe:
        result = probe(KERNELS[0], builder, args.rounds)
        if args.out:
            args.out.write_text(json.dumps(result, indent=1))
        return
    rows = [measure(k, builder, args.rounds) for k in KERNELS]
    result = {"gpu": torch.cuda.get_device_name(), "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
