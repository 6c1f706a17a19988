"""GPU: what the judge's process boundary costs -- the isolated judge (the kernel loaded in a candidate process of its
own, called through remote.RemoteKernel over shared buffers and interprocess events, as the worker judges) ÷ the
judge with the kernel loaded in its own process (as every judge did before the boundary), both in this process on
the same built kernel, interleaved and repeated in ABBA rounds; each ratio's 95 % interval from the paired rounds
(harness/intervals.py). Targets: a verify <= 1.15x; the measured kernel time of a >= 1 ms kernel <= 1.05x; #12's
speedup over eager inside the interval its header publishes.

A verify here is judge(trials=5, timing=False) on a correct kernel: model and truth built, five trials, the verdict;
the isolated one enters and leaves `Candidates.loaded` as each worker request does (the warm candidate process, its
load request, its buffers recycled from the last request). The worker's process start, the candidate process's first
start and the build are left out (`--new-candidates` measures a never-seen library). A timing row is judge(trials=1,
timing=True, baselines=[eager]): the kernel's median and its speedup over eager, each way. Kernels: the softsign
example (6.4 GB per tensor, memory-bound), KernelBench L1 #12 (a diagonal matmul, ~0.04 ms; its reference a dense
4096^3 fp32 matmul) and L1 #1 (a 4096^3 fp32 matmul, ~2 ms).

    python bench/judge_overhead.py [--rounds 12] [--state DIR] --out judge_overhead.json
    python bench/judge_overhead.py --probe [--out probe.json]   # where the time goes (the first kernel only)
    python bench/judge_overhead.py --new-candidates [--rounds 6]  # a new candidate every verify (below)

--new-candidates: every verify judges a library it has not loaded before (a copy of the built kernel under a new
name, as every candidate of Optimize and every changed save is), with a pause between verifies for the next build
(BUILD_GAP_S; a CuTe build takes 20-40 s). Three judges, interleaved in rotating order: isolated with the spare
candidate process (remote.Candidates' default), isolated without it (a process, torch and a CUDA context started
inside the verify), and in-process (the library opened in this process). Each verify's seconds include the load.

--probe (the first of --kernels) answers why a verify's time is bimodal, and where the isolated judge's goes: per
verify, the caching allocator's counters (device allocations and frees, retries after a failed allocation: each
frees every cached block and synchronizes), then the same rounds with expandable segments (the allocator grows one
mapping instead of new segments), then one cProfile of each judge (the host time each function spends, GPU waits
included: a sync is charged to whatever waits)."""

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

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.harness import intervals  # noqa: E402
from cutegen.harness.abi import KernelLibrary  # noqa: E402
from cutegen.harness.gpu_checks import judge  # noqa: E402
from cutegen.harness.problem import load_problem  # noqa: E402
from cutegen.harness.remote import Candidates  # noqa: E402
from cutegen.pairing import find_problem  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

KERNELS = [ROOT / "examples" / "softsign" / "softsign.cu",
           ROOT / "examples" / "kernelbench" / "level1" / "12_Matmul_with_diagonal_matrices_.cu",
           ROOT / "examples" / "kernelbench" / "level1" / "1_Square_matrix_multiplication_.cu"]
TARGET, TIMING_TARGET = 1.15, 1.05


def seconds(fn) -> float:
    import torch

    torch.cuda.synchronize()
    t = time.perf_counter()
    verdict = fn()["verdict"]
    torch.cuda.synchronize()
    assert verdict == "pass", verdict
    return time.perf_counter() - t


class Isolated:
    """The worker's path for one built library: every judge() enters `Candidates.loaded` (the warm candidate
    process, the load request, its buffers recycled from the last request) and leaves it, as each request does."""

    def __init__(self, candidates: Candidates, artifact: str):
        self.candidates, self.artifact = candidates, artifact
        self.requests = 0  # the candidate process's requests (pipe round trips) in the last judge(), load included

    def judge(self, problem, **kwargs) -> dict:
        with self.candidates.loaded(kind="library", path=self.artifact, device="cuda", init=[], seed=0,
                                    timed=kwargs["timing"]) as lib:
            asked = lib.process.asked - 1
            reply = judge(problem, lib, **kwargs)
            self.requests = lib.process.asked - asked
            return reply


def judges(kernel: Path, builder: Builder, candidates: Candidates):
    """(problem, {"isolated": how the worker judges, "in-process": a library opened here}, the isolated judge) for a
    built kernel."""
    build = builder.run(Tier.BUILD, kernel)
    assert build.ok, [d.format() for d in build.errors]
    problem = load_problem(find_problem(kernel))
    in_process = KernelLibrary(build.artifact)
    isolated = Isolated(candidates, build.artifact)
    ways = {"isolated": isolated.judge, "in-process": lambda problem, **kw: judge(problem, in_process, **kw)}
    return problem, ways, isolated


def measure(kernel: Path, builder: Builder, rounds: int) -> dict:
    candidates = Candidates()
    problem, ways, isolated = judges(kernel, builder, candidates)
    verify = {name: (lambda way=way: way(problem, trials=5, seed=0, timing=False, baselines=[]))
              for name, way in ways.items()}
    for name in verify:  # warm: CUDA context, cuBLAS handles, the allocator's pools, the candidate process
        seconds(verify[name])
    # ABBA rounds: each judge runs once right after the other and once right after itself in every round.
    times: dict[str, list[float]] = {"isolated": [], "in-process": []}
    for _ in range(rounds):
        took = {"isolated": 0.0, "in-process": 0.0}
        for name in ("isolated", "in-process", "in-process", "isolated"):
            took[name] += seconds(verify[name])
        for name, total in took.items():
            times[name].append(total / 2)
    median, low, high = intervals.ratio(times["isolated"], times["in-process"])
    requests = isolated.requests
    timed = timing_rows(problem, ways, max(4, rounds // 2))
    candidates.stop()
    row = {"kernel": kernel.name, "isolated_s": statistics.median(times["isolated"]),
           "in_process_s": statistics.median(times["in-process"]), "ratio": median, "ratio_low": low,
           "ratio_high": high, "rounds": rounds, "target": TARGET, "meets_target": high <= TARGET,
           "requests_per_verify": requests, "rounds_s": times, **timed}
    print(f"{kernel.name:<44} verify isolated/in-process {median:.3f}x [{low:.3f}-{high:.3f}] (target <= {TARGET}), "
          f"{requests} requests a verify; "
          f"kernel {timed['kernel_ratio']:.3f}x [{timed['kernel_low']:.3f}-{timed['kernel_high']:.3f}] "
          f"({timed['in_process_ms']:.4f} ms in-process, hand-off {timed['handoff_ms'] or 0:.4f} ms); speedup vs "
          f"eager isolated {timed['speedup_isolated']:.2f}x, in-process {timed['speedup_in_process']:.2f}x", flush=True)
    return row


def timing_rows(problem, ways: dict, rounds: int) -> dict:
    """The kernel's median and its speedup over eager, each way, in alternating order."""
    runs: dict[str, list[dict]] = {"isolated": [], "in-process": []}
    for r in range(rounds):
        for name in (("isolated", "in-process") if r % 2 == 0 else ("in-process", "isolated")):
            runs[name].append(ways[name](problem, trials=1, seed=r, timing=True, baselines=["eager"]))
    med = {name: [x["timing"]["median_ms"] for x in rows] for name, rows in runs.items()}
    ratio, low, high = intervals.ratio(med["isolated"], med["in-process"])
    speed = {name: statistics.median(x["speedup_vs_eager"] for x in rows) for name, rows in runs.items()}
    return {"kernel_ratio": ratio, "kernel_low": low, "kernel_high": high, "timing_target": TIMING_TARGET,
            "in_process_ms": statistics.median(med["in-process"]), "isolated_ms": statistics.median(med["isolated"]),
            "handoff_ms": runs["isolated"][0].get("handoff_ms"), "speedup_isolated": speed["isolated"],
            "speedup_in_process": speed["in-process"], "timing_rounds": rounds}


BUILD_GAP_S = 3.0


def new_candidates(kernel: Path, builder: Builder, rounds: int, folder: Path) -> dict:
    """Verify seconds of a never-seen library each time, three ways (see the module's docstring)."""
    import shutil

    build = builder.run(Tier.BUILD, kernel)
    assert build.ok, [d.format() for d in build.errors]
    problem = load_problem(find_problem(kernel))
    folder.mkdir(parents=True, exist_ok=True)
    ways = {"spare": Candidates(), "no-spare": Candidates(spare=False), "in-process": None}
    copies = iter(range(1 << 20))

    def verify(way: str) -> float:
        path = folder / f"candidate_{next(copies)}.so"
        shutil.copyfile(build.artifact, path)
        candidates = ways[way]
        if candidates is None:
            return seconds(lambda: judge(problem, KernelLibrary(str(path)), trials=5, seed=0, timing=False,
                                         baselines=[]))
        return seconds(lambda: _judge_loaded(candidates, problem, path))

    times: dict[str, list[float]] = {way: [] for way in ways}
    for way in ways:  # warm: this process's CUDA context, cuBLAS, the allocator, a first spare
        verify(way)
        time.sleep(BUILD_GAP_S)
    order = list(ways)
    for r in range(rounds):
        for way in order[r % 3:] + order[:r % 3]:
            times[way].append(verify(way))
            time.sleep(BUILD_GAP_S)
    for candidates in ways.values():
        if candidates is not None:
            candidates.stop()
    row = {"kernel": kernel.name, "rounds": rounds, "build_gap_s": BUILD_GAP_S,
           **{f"{way}_s": statistics.median(t) for way, t in times.items()}}
    for way in ("spare", "no-spare"):
        median, low, high = intervals.ratio(times[way], times["in-process"])
        row[way] = {"ratio": median, "low": low, "high": high}
        print(f"{kernel.name:<44} new candidate, isolated ({way}) / in-process {median:.3f}x [{low:.3f}-{high:.3f}] "
              f"({statistics.median(times[way]):.3f} s vs {statistics.median(times['in-process']):.3f} s)", flush=True)
    return row


def _judge_loaded(candidates: Candidates, problem, path: Path) -> dict:
    """One verify of a library this judge has not loaded: its process taken (or started), the library loaded, judged."""
    with candidates.loaded(kind="library", path=str(path), device="cuda", init=[], seed=0, timed=False) as lib:
        return judge(problem, lib, trials=5, seed=0, timing=False, baselines=[])


ALLOCATOR_COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_sync_all_streams")


def probe(kernel: Path, builder: Builder, rounds: int) -> dict:
    import cProfile
    import io
    import pstats

    import torch

    candidates = Candidates()
    problem, ways, isolated = judges(kernel, builder, candidates)
    verify = {"new": lambda: ways["isolated"](problem, trials=5, seed=0, timing=False, baselines=[]),
              "before": lambda: ways["in-process"](problem, trials=5, seed=0, timing=False, baselines=[])}
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
    ap.add_argument("--kernels", nargs="*", help="file names to keep (softsign's 6.4 GB tensors need both judges' "
                                                 "buffers at once: over 80 GB, so an H200)")
    ap.add_argument("--new-candidates", action="store_true", help="a never-seen library every verify (see above)")
    args = ap.parse_args()
    settings = Settings(build_timeout=600)
    builder = Builder(discover(settings), settings, args.state)
    if args.new_candidates:
        kernels = [k for k in KERNELS[1:] if not args.kernels or k.name in args.kernels]
        rows = [new_candidates(k, builder, args.rounds, args.state / "new-candidates") for k in kernels]
        if args.out:
            args.out.write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "new_candidates": rows}, indent=1))
        return
    if args.probe:
        chosen = [k for k in KERNELS if not args.kernels or k.name in args.kernels]
        result = probe(chosen[0], builder, args.rounds)
        if args.out:
            args.out.write_text(json.dumps(result, indent=1))
        return
    rows = [measure(k, builder, args.rounds) for k in KERNELS if not args.kernels or k.name in args.kernels]
    result = {"gpu": torch.cuda.get_device_name(), "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
