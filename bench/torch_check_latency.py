"""Check time of a torch-including kernel against an ABI kernel (issue 20's target: at most 2x).

    python bench/torch_check_latency.py [--reps 3]

Both are checked cold (a fresh cache each time), interleaved so machine load hits both alike: the
ABI softsign example (examples/softsign/softsign.cu) and the same kernel as a KernelBench ModelNew
(examples/softsign_modelnew/softsign_modelnew.py, through its load_inline sources) plus a .cu that
includes <torch/extension.h> (tests/corpus/model_errors/dispatch_undefined.cu, which fails after
parsing everything). It also times nvcc's phases for the torch kernel (`nvcc -time`) to show where
the time goes.

Measured 2026-12-01 (2 cores): cicc's EDG front end is 20 of the 21.5 s, parsing torch's headers. nvcc 13.0 has no
precompiled headers, and cicc's EDG `--create_pch`/`--use_pch` builds a 1.9 GB PCH whose use fails (heap-address
conflict #634-D, or SIGSEGV with ASLR off), so there is no cached parse to reuse yet (docs/results.md).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover, includes_torch, torch_include_dirs  # noqa: E402

ABI = ROOT / "examples" / "softsign" / "softsign.cu"
TORCH = [ROOT / "examples" / "softsign_modelnew" / "softsign_modelnew.py",
         ROOT / "tests" / "corpus" / "model_errors" / "dispatch_undefined.cu"]


def cold_check(path: Path, settings: Settings, toolchain) -> float:
    with tempfile.TemporaryDirectory() as state:
        builder = Builder(toolchain, settings, Path(state))
        t = time.perf_counter()
        builder.run(Tier.CHECK, path)
        return time.perf_counter() - t


def phases(path: Path, settings: Settings, toolchain) -> list[tuple[str, float]]:
    """nvcc's own per-phase times (ms) for one check compile of `path`."""
    with tempfile.TemporaryDirectory() as tmp:
        builder = Builder(toolchain, settings, Path(tmp))
        flags = builder._flags(Tier.CHECK, path, includes_torch(path.read_text()))
        table = Path(tmp) / "time.csv"
        subprocess.run([toolchain.nvcc, *flags, str(path), "-o", str(Path(tmp) / "x.ptx"), "-time", str(table)],
                       capture_output=True)
        rows = list(csv.reader(table.open())) if table.exists() else []
    return [(r[1].strip(), float(r[6])) for r in rows[1:] if len(r) > 6]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    settings, toolchain = Settings(), discover()
    # A CPU-only torch wheel lacks c10/cuda's generated headers: the ModelNew example then fails at once.
    cuda_torch = any((Path(d) / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h").exists() for d in torch_include_dirs())
    torch_files = [p for p in TORCH if p.exists() and (cuda_torch or "c10/cuda" not in p.read_text())]
    times: dict[Path, list[float]] = {p: [] for p in [ABI, *torch_files]}
    for _ in range(args.reps):
        for p in times:
            times[p].append(cold_check(p, settings, toolchain))
    abi = statistics.median(times[ABI])
    print(f"ABI kernel {ABI.relative_to(ROOT)}: {abi:.2f} s (median of {args.reps})")
    for p in torch_files:
        t = statistics.median(times[p])
        print(f"torch kernel {p.relative_to(ROOT)}: {t:.2f} s = {t / abi:.1f}x the ABI kernel (target <= 2x)")
    if torch_files:
        print("nvcc phases of the torch kernel (ms):")
        for name, ms in phases(torch_files[-1], settings, toolchain):
            print(f"  {name:<40} {ms:9.0f}")


if __name__ == "__main__":
    main()
