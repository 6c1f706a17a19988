"""GPU: the profile lens measured through the engine.

1. Per-line profiles of softsign, the Level-1 fp32 GEMM (3xTF32 CuTe mma.sync) and softmax: the top 5 lines with
   their shares and stall reasons (printed as `cutegen profile --lines` prints them), the share of samples placed on
   user lines (target >= 90 %) and the share Nsight's innermost place alone would have placed there;
2. the profile-time ratio: profile_kernel with the line profile (one ncu run, SourceCounters added) against today's
   kernel-level profile, interleaved (A B, B A, ...), each repetition a paired ratio; median and range;
3. the sanitizer on the four broken kernels of tests/kernels/sanitizer/: each case run with the tool its `// BUG:`
   comment names, placed at its bug line or not (all four tools on one kernel: tests/profiler/test_lens_gpu.py).

    python bench/profile_lines.py --out lens.json [--reps 2] [--only softsign] [--no-sanitizer]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from cutegen.compile import Tier  # noqa: E402
from cutegen.profiler import profile_kernel  # noqa: E402
from cutegen.profiler.sanitizer import sanitize_kernel  # noqa: E402
from gpu_session import engine  # noqa: E402


def shared_builder(builder):
    """A Builder on the test suite's build cache (tests/conftest.py: build_state), so that the lens GPU tests
    that follow in the same gpu-check part find these builds (the fp32 GEMM takes 40 s to build)."""
    import os

    sys.path.insert(0, str(ROOT))
    try:
        from tests.support.build_cache import engine_hash
    except ImportError:
        return builder
    from cutegen.compile import Builder

    where = Path(os.environ.get("CUTEGEN_TEST_CACHE", str(Path.home() / ".cache" / "cutegen" / "test-builds")))
    state = where.expanduser() / engine_hash()
    state.mkdir(parents=True, exist_ok=True)
    return Builder(builder.toolchain, builder.settings, state)

KERNELS = {"softsign": ROOT / "examples/softsign/softsign.cu",
           "gemm_fp32": ROOT / "examples/kernelbench/level1/1_Square_matrix_multiplication_.cu",
           "softmax": ROOT / "examples/softmax/softmax.cu"}
CASES = ROOT / "tests" / "kernels" / "sanitizer"


def bug_line(path: Path) -> tuple[int, str]:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if "// BUG:" in line:
            return i, line.split("// BUG:")[1].strip()
    raise ValueError(f"{path.name} marks no bug line")


def profile_rows(builder, worker, state, names, reps) -> list[dict]:
    rows = []
    for name in names:
        kernel = KERNELS[name]
        times: dict[bool, list[float]] = {False: [], True: []}
        last = None
        for rep in range(reps):
            for lines in ((False, True) if rep % 2 == 0 else (True, False)):  # interleaved, order alternating
                t = time.perf_counter()
                record = profile_kernel(kernel, builder, worker, state_dir=state, lines=lines)
                times[lines].append(time.perf_counter() - t)
                if lines:
                    last = record
        ratios = [b / a for a, b in zip(times[False], times[True])]
        row = {"kernel": name, "verdict": last.verdict, "message": last.message,
               "kernel_level_s": times[False], "with_lines_s": times[True], "ratio_median": statistics.median(ratios),
               "ratio_range": [min(ratios), max(ratios)], "stages_s": last.details.get("stage_seconds")}
        if last.lines is not None:
            p = last.lines
            row.update(user_share=p.user_share, innermost_share=p.innermost_samples / max(p.total_samples, 1),
                       samples=p.total_samples, attribution=p.attribution, note=p.note,
                       top=[{"line": f"{Path(h.file).name}:{h.line}", "share": round(h.share, 4), "text": h.text,
                             "stalls": h.top_stalls(3), "executed": h.executed, "excess_sectors": h.excess_sectors,
                             "excess_wavefronts": h.excess_wavefronts, "markers": h.markers[:1]} for h in p.hottest(5)])
        else:
            row["lines_problem"] = last.details.get("lines_problem")
        rows.append(row)
        _print_profile(row)
    return rows


def _print_profile(row: dict) -> None:
    print(f"\n== {row['kernel']}: {row['verdict']} · profile time with lines / kernel-level = "
          f"{row['ratio_median']:.2f}x (range {row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f})", flush=True)
    if "top" not in row:
        print(f"   no line profile: {row.get('lines_problem')}")
        return
    print(f"   {row['user_share']:.1%} of {row['samples']:,} samples on user lines ({row['attribution']}); "
          f"Nsight's innermost place alone: {row['innermost_share']:.1%}")
    for h in row["top"]:
        stalls = ", ".join(f"{r} {c:,}" for r, c in h["stalls"])
        print(f"   {h['line']:>28} {h['share']:6.1%}  {stalls:60}  {h['text'][:60]}")


def sanitizer_rows(builder, state) -> list[dict]:
    rows = []
    cases = sorted(CASES.glob("*.cu"))
    runs = [(c, (bug_line(c)[1],)) for c in cases]  # all four tools on one call: tests/profiler/test_lens_gpu.py
    for case, tools in runs:
        line, tool = bug_line(case)
        t = time.perf_counter()
        record = sanitize_kernel(case, builder, state_dir=state, tools=tools)
        seconds = time.perf_counter() - t
        findings = record.sanitizer.findings if record.sanitizer else []
        mine = [f for f in findings if f.tool == tool]
        placed = any(f.line == line and f.file == str(case) for f in mine)
        row = {"case": case.stem, "tools": list(tools), "bug_line": line, "tool": tool, "verdict": record.verdict,
               "placed": placed, "seconds": round(seconds, 1), "summary": record.summary(),
               "findings": [{k: getattr(f, k) for k in ("tool", "line", "message", "count", "threads", "addresses")}
                            for f in findings], "unplaced": record.sanitizer.unplaced if record.sanitizer else []}
        rows.append(row)
        status = "PLACED" if placed else "NOT placed"
        print(f"\n== sanitize {case.name} ({', '.join(tools)}): {status} at its bug line {line} · "
              f"{record.summary()} · {seconds:.1f} s", flush=True)
        for f in row["findings"]:
            print(f"   {case.name}:{f['line']}: {f['tool']}: {f['message']} ({f['count']} reports; "
                  f"{'; '.join(f['threads'][:2])})")
        if not findings:
            print(f"   {record.message}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--reps", type=int, default=2, help="interleaved repetitions of each profile pair")
    ap.add_argument("--only", nargs="*", choices=list(KERNELS))
    ap.add_argument("--no-sanitizer", action="store_true")
    args = ap.parse_args()
    builder, worker, state = engine()
    builder = shared_builder(builder)
    names = args.only or list(KERNELS)
    sources = [KERNELS[n] for n in names] + ([] if args.no_sanitizer else sorted(CASES.glob("*.cu")))
    t = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:  # the builds first, in parallel: the timed profiles then hit the cache
        builds = list(pool.map(lambda p: builder.run(Tier.BUILD, p), sources))
    print(f"builds: {sum(b.ok for b in builds)}/{len(builds)} ok in {time.perf_counter() - t:.0f} s", flush=True)
    out = {"profiles": profile_rows(builder, worker, state, names, args.reps)}
    worker.stop()
    if not args.no_sanitizer:
        out["sanitizer"] = sanitizer_rows(builder, state)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, default=str))
    ok = all(r.get("user_share", 0) >= 0.9 for r in out["profiles"]) and all(
        r["placed"] for r in out.get("sanitizer", []))
    print("\nall targets met" if ok else "\nsome targets NOT met (see above)")


if __name__ == "__main__":
    main()
