"""Layout-probe benchmark: probe build time vs the check tier's on the same file, and cache-hit lookups.

    python bench/layout_probe.py [--reps 3] [--out results.json]

Both run cold (fresh state directories) and interleaved per file, so drift and the load of a shared machine
fall on both alike. Wall time and the compilers' CPU time (user + sys of the child processes) are reported:
on a loaded 2-core machine the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.layouts.probe import LayoutProbe  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

FILES = ["examples/softsign/softsign.cu", "examples/softmax/softmax.cu", "examples/idioms/gemm_sm80_mma_sync/gemm_sm80_mma_sync.cu"]


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def timed(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), _children_cpu()
    out = fn()
    return time.perf_counter() - wall, _children_cpu() - cpu, out


def one_file(path: Path, reps: int, toolchain, settings) -> dict:
    check_wall, check_cpu, probe_wall, probe_cpu, facts = [], [], [], [], 0
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as state:
            w, c, result = timed(lambda: Builder(toolchain, settings, Path(state)).run(Tier.CHECK, path))
            assert result.ok, f"{path} must compile cleanly: {[d.message for d in result.errors]}"
            check_wall.append(w)
            check_cpu.append(c)
        with tempfile.TemporaryDirectory() as state:
            w, c, result = timed(lambda: LayoutProbe(toolchain, settings, Path(state)).run(path))
            assert result.problem is None, result.problem
            probe_wall.append(w)
            probe_cpu.append(c)
            facts = len(result.facts)
    row = {"file": str(path.relative_to(ROOT)), "facts": facts,
           "check_wall_s": statistics.median(check_wall), "probe_wall_s": statistics.median(probe_wall),
           "check_cpu_s": statistics.median(check_cpu), "probe_cpu_s": statistics.median(probe_cpu)}
    row["wall_ratio"] = row["probe_wall_s"] / row["check_wall_s"]
    row["cpu_ratio"] = row["probe_cpu_s"] / row["check_cpu_s"]
    print(f"  {row['file']:<40} {facts:3d} objects  check {row['check_wall_s']:6.2f} s ({row['check_cpu_s']:5.1f} cpu)"
          f"  probe {row['probe_wall_s']:6.2f} s ({row['probe_cpu_s']:5.1f} cpu)"
          f"  ratio wall {row['wall_ratio']:.2f} cpu {row['cpu_ratio']:.2f}", flush=True)
    return row


def cache_hits(path: Path, toolchain, settings, n: int = 200) -> dict:
    with tempfile.TemporaryDirectory() as state:
        probe = LayoutProbe(toolchain, settings, Path(state))
        probe.run(path)
        text = path.read_text()
        times = []
        for _ in range(n):
            t = time.perf_counter()
            assert probe.cached(path, text) is not None
            times.append(time.perf_counter() - t)
    times.sort()
    return {"file": str(path.relative_to(ROOT)), "lookups": n, "median_ms": 1e3 * statistics.median(times),
            "p95_ms": 1e3 * times[int(0.95 * n) - 1]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--files", nargs="*", default=FILES)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = Settings()
    toolchain = discover(settings)
    print(f"nvcc {toolchain.nvcc_version}, CUTLASS {toolchain.cutlass_version}, {toolchain.arch}, {os.cpu_count()} cores")
    rows = [one_file(ROOT / f, args.reps, toolchain, settings) for f in args.files]
    hits = cache_hits(ROOT / args.files[-1], toolchain, settings)
    summary = {
        "rows": rows,
        "wall_ratio_of_totals": sum(r["probe_wall_s"] for r in rows) / sum(r["check_wall_s"] for r in rows),
        "cpu_ratio_of_totals": sum(r["probe_cpu_s"] for r in rows) / sum(r["check_cpu_s"] for r in rows),
        "max_wall_ratio": max(r["wall_ratio"] for r in rows),
        "cache_hit": hits,
    }
    print(f"probe / check: wall {summary['wall_ratio_of_totals']:.2f} (max {summary['max_wall_ratio']:.2f}), "
          f"cpu {summary['cpu_ratio_of_totals']:.2f}; target <= 1.5")
    print(f"cache-hit lookup ({hits['file']}): median {hits['median_ms']:.2f} ms, p95 {hits['p95_ms']:.2f} ms")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
