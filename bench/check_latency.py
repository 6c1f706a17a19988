"""Check-tier benchmark: latency vs bare `nvcc -ptx`, cache-hit time, condensation and location accuracy.

    python bench/check_latency.py [--reps 3] [--out results.json]

Each ratio is taken within one run on one machine: the baseline (bare nvcc with the same flags) and
CuTeGen's check run interleaved on the same files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.model import Severity  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402
from tests.support.corpus import corpus  # noqa: E402


def bare_nvcc_seconds(builder: Builder, path: Path, out_dir: Path) -> float:
    flags = builder._flags(Tier.CHECK, path.resolve())
    cmd = [builder.toolchain.nvcc, *flags, str(path), "-o", str(out_dir / "bare.ptx")]
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True)
    return time.perf_counter() - t


def cutegen_seconds(path: Path, settings: Settings, toolchain) -> float:
    with tempfile.TemporaryDirectory() as state:  # a fresh cache: a real compile every time
        builder = Builder(toolchain, settings, Path(state))
        t = time.perf_counter()
        builder.run(Tier.CHECK, path)
        return time.perf_counter() - t


def latency(files: list[Path], reps: int, toolchain, settings) -> dict:
    rows, tmp = [], Path(tempfile.mkdtemp())
    probe = Builder(toolchain, settings, tmp)
    for f in files:
        bare, ours = [], []
        for _ in range(reps):  # interleaved, so drift hits both alike
            bare.append(bare_nvcc_seconds(probe, f, tmp))
            ours.append(cutegen_seconds(f, settings, toolchain))
        rows.append({"file": str(f.relative_to(ROOT)), "nvcc_ptx_s": statistics.median(bare),
                     "cutegen_check_s": statistics.median(ours)})
        rows[-1]["ratio"] = rows[-1]["cutegen_check_s"] / rows[-1]["nvcc_ptx_s"]
        print(f"  {rows[-1]['file']:<55} nvcc -ptx {rows[-1]['nvcc_ptx_s']:6.2f} s  check {rows[-1]['cutegen_check_s']:6.2f} s"
              f"  ratio {rows[-1]['ratio']:.3f}", flush=True)
    total_ratio = sum(r["cutegen_check_s"] for r in rows) / sum(r["nvcc_ptx_s"] for r in rows)
    return {"rows": rows, "ratio_of_totals": total_ratio, "median_ratio": statistics.median(r["ratio"] for r in rows)}


def cache_hit(path: Path, toolchain, settings) -> dict:
    with tempfile.TemporaryDirectory() as state:
        builder = Builder(toolchain, settings, Path(state))
        builder.run(Tier.CHECK, path)
        t = time.perf_counter()
        hit = builder.run(Tier.CHECK, path)
        engine = time.perf_counter() - t
        assert hit.cached
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cutegen", "check", "--state-dir", state, str(path)], capture_output=True)
        cli = time.perf_counter() - t
    return {"engine_hit_s": engine, "cli_process_hit_s": cli}


def condensation(builder: Builder) -> dict:
    raw = shown = on_line = 0
    cases = corpus("errors")
    for case in cases:
        result = builder.run(Tier.CHECK, case.path)
        raw += len(result.raw_log.encode())
        printed = [d for d in result.diagnostics if d.severity is not Severity.INFO]
        shown += sum(len(d.format(ROOT).encode()) + 1 for d in printed)
        errors = result.errors
        on_line += bool(errors) and errors[0].line in case.bug_lines | case.alt_lines
    return {"cases": len(cases), "raw_bytes": raw, "condensed_bytes": shown, "size_ratio": shown / raw,
            "on_bug_line": on_line, "on_bug_line_share": on_line / len(cases)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings, toolchain = Settings(), discover()
    files = [ROOT / "examples/softsign/softsign.cu", *[c.path for c in corpus("clean")],
             *[c.path for c in corpus("errors")[:4]]]
    print(f"nvcc {toolchain.nvcc_version}, CUTLASS {toolchain.cutlass_version}, {toolchain.arch}")
    print("check latency vs bare nvcc -ptx (same flags, medians of interleaved runs):")
    lat = latency([f for f in files if f.exists()], args.reps, toolchain, settings)
    hit = cache_hit(files[0], toolchain, settings)
    with tempfile.TemporaryDirectory() as state:
        cond = condensation(Builder(toolchain, settings, Path(state)))
    result = {"latency": lat, "cache_hit": hit, "condensation": cond,
              "machine": f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores",
              "date": time.strftime("%Y-%m-%d")}
    print(f"\ncheck ÷ nvcc -ptx: {lat['ratio_of_totals']:.3f} (sum), {lat['median_ratio']:.3f} (median per file)  target ≤ 1.15")
    print(f"cache hit: engine {hit['engine_hit_s'] * 1000:.1f} ms, whole CLI process {hit['cli_process_hit_s']:.2f} s  target ≤ 0.2 s")
    print(f"condensed ÷ raw output: {cond['condensed_bytes']} / {cond['raw_bytes']} B = 1/{1 / cond['size_ratio']:.0f}  target ≤ 1/20")
    print(f"first error on the bug line: {cond['on_bug_line']}/{cond['cases']} = {cond['on_bug_line_share']:.0%}  target ≥ 90 %")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
