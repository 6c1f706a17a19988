"""GPU: the flagship bf16 GEMM (and three candidates) against cuBLAS at 4096^3, timed four ways in one process,
interleaved, five blocks each -- because the method moves cuBLAS's own figure by up to 16 %:

  event         a 256 MB L2 flush, an event pair around ONE call, a sync (bench/gemm_rungs.py's method)
  event+pad     the same with a 200 us GPU sleep after the flush, so host-side launch work cannot leak in
  graph-flush   a CUDA graph of [flush, call] x 20 minus a graph of [flush] x 20, divided by 20
  back-to-back  20 calls between one event pair, no flush (sustained load: the card's power limit shows)

Each ratio is the median of the five per-block ratios, with their min..max. Written 2026-12-01 after a per-call
run read cuBLAS at 648 TFLOP/s (so the flagship looked 1.06x faster) on one H200 and 696 on another.

One process's blocks share its cuBLAS heuristics, clocks and allocations, and 2026-12-02 found that one
process's interval does not predict another's; so the published ratio pools several processes (`--pool`, on the
JSON files of separate runs): the median of every block's ratio, its 95 % confidence interval and the min..max over
all of them, and two 95 % intervals of the median: over every block, and over the per-process medians. Both are the
harness's (cutegen.harness.intervals.median_interval: two order statistics whose binomial coverage of the median is
at least 95 %, no assumption about the noise's shape), the interval every verdict's ratio carries; min..max is the
blocks' spread, printed beside them. Decision (2026-12-07): a kernel "beats cuBLAS" by a method when the
interval over the per-process medians, against the faster of torch.matmul and torch.matmul(out=) in each block
(`x best cuBLAS`: the kernels write a preallocated output), lies above 1. Processes are the unit because they are
the independent samples (blocks of one process share its state), so that interval carries the spread between
processes and cards that the blocks' does not; under 6 processes it is their whole range. Until then the rule was
the pooled min over blocks above 1: a bound that widens with every block added, where an interval narrows, so more
measurement could only make a true lead harder to show.

Each round times the functions in a new random order. In a fixed order (to 2026-12-06) the place in the order moved
ratios by up to 5 %: on the H200 the 128x64-epilogue candidate read 1.05x cuBLAS by graph-flush and
torch.matmul(out=) 1.04x torch.matmul back-to-back; shuffled, 0.99x and 0.99x.

    python bench/gemm_timing_methods.py [--out gemm_timing.json] [--candidates NAME ...] [--shape M N K]
    python bench/gemm_timing_methods.py --pool run1.json run2.json ...   (no GPU needed)

The builds (CUTLASS collectives: about a minute each) can be made on a machine without a GPU and carried, so a
device call spends its minutes timing: `--save-libraries DIR` builds and copies each library to DIR/NAME.so (no
GPU needed), `--libraries DIR` loads them from there instead of building.

`--clocks SECONDS`: instead of the four methods, each function back to back for SECONDS at a time (twice each,
alternating) while nvidia-smi samples the SM clock, the board power and the clock-event reasons every 100 ms: whether
the card holds its boost clock under each kernel or its power limit pulls it down (a kernel that loses to cuBLAS
at the same clock loses on instructions, not on energy).

`--shape 512 512 512`: a GEMM of a few microseconds, back to back, is bound by the host's work per call rather than
the GPU's; there the ratio between two builds of one kernel with different launchers is the launchers' difference.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "bench")]

import gemm_rungs  # noqa: E402
from cutegen.harness.intervals import median_interval  # noqa: E402

CANDIDATES = ("coop_128x256_c2x1_sw8", "pingpong_128x128_c2x1_sw4", "coop_256x128_c1x2")  # --candidates
M = N = K = 4096
BLOCKS, ROUNDS, GRAPH_ROUNDS, GRAPH_CALLS = 10, 15, 5, 20  # blocks per process (--blocks); a block takes ~1 s
METHODS = ("event", "event+pad", "graph-flush", "back-to-back")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--candidates", nargs="*", default=list(CANDIDATES), choices=list(gemm_rungs.CANDIDATES))
    ap.add_argument("--pool", nargs="+", type=Path, help="pool the --out files of separate runs; runs nothing")
    ap.add_argument("--save-libraries", type=Path, help="build into this folder (NAME.so) and stop: no GPU needed")
    ap.add_argument("--libraries", type=Path, help="load NAME.so from this folder instead of building")
    ap.add_argument("--shape", nargs=3, type=int, default=[M, N, K], metavar=("M", "N", "K"),
                    help="the timed shape (default 4096^3); a small one is host-bound: it times the launchers")
    ap.add_argument("--clocks", type=float, metavar="SECONDS", help="sustained runs with clock/power samples instead")
    ap.add_argument("--blocks", type=int, default=BLOCKS, help=f"interleaved blocks in this process (default {BLOCKS})")
    args = ap.parse_args()
    if args.pool:
        pooled = pool([json.loads(p.read_text()) for p in args.pool])
        if args.out:
            args.out.write_text(json.dumps(pooled, indent=1))
        return
    folder = Path("/tmp/cutegen-gemm-candidates")
    folder.mkdir(exist_ok=True)
    candidates = gemm_rungs.write_candidates(folder)
    kernels = {"gemm_bf16": gemm_rungs.RUNGS["gemm_bf16"], **{name: candidates[name] for name in args.candidates}}
    if args.save_libraries:
        save_libraries(kernels, args.save_libraries)
        return
    import torch

    libraries = load_libraries(kernels, args.libraries) if args.libraries else None
    if libraries is None:
        libraries, _ = gemm_rungs.build_all(kernels)
    torch.manual_seed(0)
    m, n, k = args.shape
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
    preallocated = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    fns = {"cuBLAS": lambda: torch.matmul(a, b), "cuBLAS_out": lambda: torch.matmul(a, b, out=preallocated)}
    for name, lib in libraries.items():
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        status = check(torch, lib, (m, n, k))
        print(f"checked {name:<34} {status}", flush=True)
        if not status.startswith("pass"):
            continue
        # the stream at call time: a graph capture runs the launcher on its capturing stream
        fns[name] = lambda lib=lib, out=out: lib([a, b], [out], torch.cuda.current_stream())
    if args.clocks:
        report = sustained(torch, fns, args.clocks, 2 * m * n * k)
        if args.out:
            args.out.write_text(json.dumps({"shape": args.shape, "sustained": report}, indent=1))
        return
    cublas_kernels = {name: kernel_names(torch, fns[name]) for name in ("cuBLAS", "cuBLAS_out")}
    for name, kernels in cublas_kernels.items():
        print(f"{name} runs: {', '.join(kernels)}", flush=True)
    timer = Timer(torch)
    blocks = [timer.block(fns) for _ in range(args.blocks)]
    summary = pool([{"shape": args.shape, "blocks": blocks}])  # this process alone: a pool of one run
    if args.out:
        args.out.write_text(json.dumps({"shape": args.shape, "cublas_kernels": cublas_kernels, "blocks": blocks,
                                        "summary": summary}, indent=1))


def save_libraries(kernels: dict[str, Path], folder: Path) -> None:
    """Build every kernel (the build tier, in parallel) and copy each library to folder/NAME.so."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    # one build per core: on a 2-core machine ten at once each ran past the build timeout
    for name, (outcome, _) in gemm_rungs.build(kernels, workers=os.cpu_count() or 1).items():
        if outcome.ok:
            shutil.copyfile(outcome.artifact, folder / f"{name}.so")


def load_libraries(kernels: dict[str, Path], folder: Path) -> dict | None:
    """folder/NAME.so for every kernel, or None (then they are built here) when one is missing or will not load
    on this machine (a library built elsewhere links the CUDA runtime of that machine's toolkit)."""
    from cutegen.harness.abi import KernelLibrary

    try:
        return {name: KernelLibrary(str(folder / f"{name}.so")) for name in kernels}
    except OSError as error:
        print(f"prebuilt libraries not used ({error}): building", flush=True)
        return None


# Shapes a candidate must compute before it is timed, beside the timed one: one off every tile edge, and one of 4
# tiles with 128 k-tiles each (a forced stream-K splits every tile among many SMs and sums the pieces).
CHECK_SHAPES = ((1000, 1032, 520), (256, 512, 8192))


def check(torch, lib, timed: tuple[int, int, int]) -> str:
    """A candidate is timed only if it computes the product on the timed shape and every CHECK_SHAPES shape (bf16
    tolerance, against torch.matmul, output poisoned first); whether two calls give the same bits is reported too
    (a stream-K tile summed in arrival order need not)."""
    from cutegen.harness.compare import compare

    deterministic, shapes = True, (timed, *CHECK_SHAPES)
    for m, n, k in shapes:
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
        reference, out, results = torch.matmul(a, b), torch.empty(m, n, dtype=torch.bfloat16, device="cuda"), []
        for _ in range(2):
            out.fill_(float("nan"))
            rc = lib([a, b], [out], torch.cuda.current_stream())
            torch.cuda.synchronize()
            if rc != 0:
                return f"refused at {m}x{n}x{k} (cudaError {rc})"
            mismatch = compare(out, reference, gemm_rungs.TOLERANCE, gemm_rungs.TOLERANCE)
            if mismatch is not None:
                return f"WRONG at {m}x{n}x{k}: {mismatch.message}"
            results.append(out.clone())
        deterministic = deterministic and torch.equal(*results)
    checked = ", ".join(f"{m}x{n}x{k}" for m, n, k in shapes)
    return f"pass ({checked}), " + ("deterministic" if deterministic else "NOT bitwise deterministic")


def sustained(torch, fns: dict, seconds: float, flops: int) -> dict:
    """Each function back to back for `seconds`, twice, in alternation, with nvidia-smi sampling every 100 ms: per
    function its TFLOP/s, and the median SM clock and power over the samples of its runs (the first 0.5 s of each
    run left out: the clock's ramp), and how often each clock-event reason was active (nvidia-smi's bitmask)."""
    import subprocess
    import threading
    import time

    query = "clocks.sm,power.draw,clocks_event_reasons.active"
    sampler = subprocess.Popen(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-lms", "100"],
                               stdout=subprocess.PIPE, text=True)
    samples: list[tuple[float, float, float, int]] = []  # stamped on arrival: nvidia-smi's own stamps are local time

    def read() -> None:
        for line in sampler.stdout:
            try:
                clock, power, reasons = (field.strip() for field in line.split(","))
                samples.append((time.time(), float(clock), float(power), int(reasons, 16)))
            except ValueError:  # "[N/A]" or a partial line: not a sample
                continue

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    spans: list[tuple[str, float, float, float]] = []  # name, start, end (wall clock), TFLOP/s
    try:
        for name in list(fns) * 2:
            fn, calls = fns[name], 0
            torch.cuda.synchronize()
            start = time.time()
            while time.time() - start < seconds:
                for _ in range(GRAPH_CALLS):
                    fn()
                calls += GRAPH_CALLS
                torch.cuda.synchronize()
            end = time.time()
            spans.append((name, start, end, flops * calls / (end - start) / 1e12))
    finally:
        sampler.terminate()
        reader.join(timeout=5)
    report = {}
    for name in fns:
        mine = [s for n, start, end, _ in spans if n == name for s in samples if start + 0.5 <= s[0] <= end]
        reasons: dict[str, int] = {}
        for *_, bits in mine:
            reasons[hex(bits)] = reasons.get(hex(bits), 0) + 1
        report[name] = {"tflops": [round(t, 1) for n, *_, t in spans if n == name], "samples": len(mine),
                        "sm_mhz": statistics.median(s[1] for s in mine) if mine else None,
                        "watts": statistics.median(s[2] for s in mine) if mine else None, "reasons": reasons}
        print(f"{name:<34} {report[name]['tflops']} TFLOP/s  SM {report[name]['sm_mhz']} MHz  "
              f"{report[name]['watts']} W  reasons {reasons}  ({len(mine)} samples)", flush=True)
    return report


def kernel_names(torch, fn) -> list[str]:
    """The device kernels one call launches (torch.profiler): which cuBLAS kernel the flagship is up against."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


class Timer:
    def __init__(self, torch):
        self.torch = torch
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.order = random.Random(0)  # the rounds' orders: seeded, so a rerun times in the same orders

    def _events(self):
        return (self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True))

    def per_call(self, fn, pad_us: float = 0.0) -> float:
        self.flush.zero_()
        if pad_us:
            self.torch.cuda._sleep(int(pad_us * 1980))  # cycles at the H200's 1.98 GHz boost clock
        start, end = self._events()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def graph(self, fn, flush: bool = True):
        torch = self.torch
        graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()  # warm on the capture stream (allocator pools, cuBLAS handles)
            torch.cuda.synchronize()
            with torch.cuda.graph(graph, stream=side):
                for _ in range(GRAPH_CALLS):
                    if flush:
                        self.flush.zero_()
                    fn()
        return graph

    def replay(self, graph) -> float:
        start, end = self._events()
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def back_to_back(self, fn) -> float:
        start, end = self._events()
        start.record()
        for _ in range(GRAPH_CALLS):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / GRAPH_CALLS

    def block(self, fns: dict) -> dict:
        """One block: every function by every method, in a new random order each round (see the module's note);
        the medians, keyed "name|method"."""
        if not hasattr(self, "_graphs"):
            self._graphs = {name: self.graph(fn) for name, fn in fns.items()}
            self._flush_only = self.graph(lambda: None)
        # keyed in fns' order whatever order they are timed in: reports list them as given
        times: dict[str, list[float]] = {f"{name}|{method}": [] for method in METHODS for name in fns}
        for _ in range(ROUNDS):
            for name in self._shuffled(fns):
                times[f"{name}|event"].append(self.per_call(fns[name]))
                times[f"{name}|event+pad"].append(self.per_call(fns[name], pad_us=200))
        for _ in range(GRAPH_ROUNDS):
            flush = self.replay(self._flush_only)
            for name in self._shuffled(fns):
                times[f"{name}|graph-flush"].append((self.replay(self._graphs[name]) - flush) / GRAPH_CALLS)
            for name in self._shuffled(fns):
                times[f"{name}|back-to-back"].append(self.back_to_back(fns[name]))
        return {key: statistics.median(values) for key, values in times.items()}

    def _shuffled(self, names) -> list:
        order = list(names)
        self.order.shuffle(order)
        return order


def best_cublas(block: dict, method: str) -> float:
    """The faster of torch.matmul and torch.matmul(out=) in this block: the kernels write a preallocated output, and
    allocating one is host time that the per-call `event` method can show."""
    return min(block[f"{name}|{method}"] for name in ("cuBLAS", "cuBLAS_out") if f"{name}|{method}" in block)


def pool(runs: list[dict]) -> dict:
    """Every block of every run, each ratio against its own block's cuBLAS (torch.matmul) and its best cuBLAS
    (best_cublas): median and min..max over them all, and the spread of the per-run medians (how far one process's
    figure moves from the next's)."""
    names = [key.split("|")[0] for key in runs[0]["blocks"][0] if key.endswith("|event")]
    shapes = {tuple(run.get("shape", (M, N, K))) for run in runs}  # runs written before --shape: 4096^3
    if len(shapes) != 1:
        raise SystemExit(f"cannot pool runs of different shapes: {sorted(shapes)}")
    (m, n, k), = shapes
    flops, pooled = 2 * m * n * k, {}
    print(f"{m}x{n}x{k}: {len(runs)} runs x {len(runs[0]['blocks'])} blocks; x cuBLAS: median [min, max] over all "
          "blocks; x best cuBLAS: median, its 95 % interval over blocks, [min, max]; per-run medians (x best cuBLAS) and "
          "their median's 95 % interval", flush=True)
    for method in METHODS:
        for name in names:
            key = f"{name}|{method}"
            blocks = [[b for b in run["blocks"] if key in b] for run in runs]
            per_run = [[b["cuBLAS|" + method] / b[key] for b in run] for run in blocks]
            ratios = sorted(r for run in per_run for r in run)
            if not ratios:
                continue
            best_per_run = [[best_cublas(b, method) / b[key] for b in run] for run in blocks]
            best = sorted(r for run in best_per_run for r in run)
            ms = statistics.median(b[key] for run in blocks for b in run)
            run_medians = [round(statistics.median(r), 4) for r in per_run if r]
            best_ci = median_interval(best)
            best_run_medians = [round(statistics.median(r), 4) for r in best_per_run if r]
            pooled[key] = {"ms": ms, "tflops": flops / ms / 1e9, "x_cublas": statistics.median(ratios),
                           "interval": [ratios[0], ratios[-1]], "ci95": list(median_interval(ratios)),
                           "x_best_cublas": statistics.median(best), "best_interval": [best[0], best[-1]],
                           "best_ci95": list(best_ci), "blocks": len(ratios), "run_medians": run_medians,
                           "best_run_medians": best_run_medians,
                           "best_runs_ci95": list(median_interval(best_run_medians))}
            runs_ci = pooled[key]["best_runs_ci95"]
            print(f"{method:<13} {name:<36} {flops / ms / 1e9:6.1f} TFLOP/s {statistics.median(ratios):.3f}x "
                  f"[{ratios[0]:.3f},{ratios[-1]:.3f}]  best {statistics.median(best):.3f}x ci95 [{best_ci[0]:.3f},"
                  f"{best_ci[1]:.3f}] range [{best[0]:.3f},{best[-1]:.3f}]  runs "
                  f"{' '.join(f'{r:.3f}' for r in best_run_medians)} ci95 [{runs_ci[0]:.3f},{runs_ci[1]:.3f}]",
                  flush=True)
    return pooled


if __name__ == "__main__":
    main()
