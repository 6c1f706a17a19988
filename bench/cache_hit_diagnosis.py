"""A build-cache hit with the diagnosis stored beside the log, against the same hit condensing the log again (what
every hit did before the diagnosis was stored): paired rounds, interleaved, in one process, on one cached check.

    python bench/cache_hit_diagnosis.py [--file examples/gemm_bf16/gemm_bf16.cu] [--rounds 15] [--no-cpp-demangle]

The file is checked once first (a cold compile, minutes for a CUTLASS kernel, unless the state dir has it). The
"condensed again" side is made by giving the stored diagnosis another code version each round (it is then made
and stored again); `--no-cpp-demangle` leaves the kernel names to the toolkit's cu++filt / c++filt, as on an
install without that package. Prints the two medians and the median ratio with its 95 % interval.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.compile import builder as builder_module  # noqa: E402
from cutegen.harness.intervals import median_interval  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", default=str(ROOT / "examples" / "gemm_bf16" / "gemm_bf16.cu"))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--state-dir", default=None, help="a state dir that may hold the check already")
    parser.add_argument("--no-cpp-demangle", action="store_true")
    args = parser.parse_args()
    if args.no_cpp_demangle:
        sys.modules["cpp_demangle"] = None  # type: ignore[assignment]  # `import cpp_demangle` fails
    settings = Settings(check_timeout=900)
    state = Path(args.state_dir or tempfile.mkdtemp(prefix="cutegen-hit-"))
    builder, path = Builder(discover(settings), settings, state), Path(args.file).resolve()
    first = builder.run(Tier.CHECK, path)
    print(f"{path.name}: {'cached' if first.cached else f'compiled in {first.seconds:.0f} s'}, "
          f"{len(first.diagnostics)} diagnostics")
    real, versions = builder_module.diagnosis_code, itertools.count()
    stored, again = [], []
    for _ in range(args.rounds):
        for side, code in ((stored, real), (again, lambda: f"another condenser {next(versions)}")):
            builder_module.diagnosis_code = code
            started = time.perf_counter()
            assert builder.run(Tier.CHECK, path).cached
            side.append(time.perf_counter() - started)
        builder_module.diagnosis_code = real
        builder.run(Tier.CHECK, path)  # this code's diagnosis stored again for the next round
    ratios = [a / s for a, s in zip(again, stored)]
    low, high = median_interval(ratios)
    print(f"hit, diagnosis stored: {statistics.median(stored) * 1e3:.1f} ms; condensed again: "
          f"{statistics.median(again) * 1e3:.1f} ms; ratio {statistics.median(ratios):.0f}x "
          f"(95 % interval {low:.0f}-{high:.0f}x, {args.rounds} paired rounds)")


if __name__ == "__main__":
    main()
