"""What writing every file whole costs (files.write_atomic: a temporary, fsync, os.replace) against the in-place
`Path.write_text` it replaced, on the run records a check writes, and that cost against a cached `cutegen check`.

    python bench/atomic_write_cost.py [--reps 200] [--out results.json]

Both ways write the same real check record (the softsign example's, as records.write makes it) into the same
folder, interleaved and repeated; the ratio's p10-p90 interval comes with the medians.
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

from cutegen.files import write_atomic  # noqa: E402

RECORD = ROOT / "tests" / "records" / "h200" / "softsign-check.json"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(reps: int, folder: Path) -> dict:
    text = RECORD.read_text()
    atomic, plain, ratios = [], [], []
    for i in range(reps):
        for way in ((0, 1) if i % 2 else (1, 0)):  # alternate which goes first
            target = folder / f"record-{way}.json"
            start = time.perf_counter()
            if way == 0:
                write_atomic(target, text)
            else:
                target.write_text(text)
            (atomic if way == 0 else plain).append(time.perf_counter() - start)
        ratios.append(atomic[-1] / plain[-1])
    return {"reps": reps, "bytes": len(text.encode()),
            "atomic_ms_median": statistics.median(atomic) * 1e3, "plain_ms_median": statistics.median(plain) * 1e3,
            "ratio_median": statistics.median(ratios), "ratio_p10": _quantile(ratios, 0.1),
            "ratio_p90": _quantile(ratios, 0.9),
            "added_ms_per_check": 3 * (statistics.median(atomic) - statistics.median(plain)) * 1e3}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--folder", type=Path, help="where to write (default: a temporary folder on this disk)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        result = measure(args.reps, Path(folder))
    # A check writes three files through the helper: the cache entry's outcome and the record twice (its own
    # name and latest-check.json); a cached `cutegen check` took 0.22-0.37 s on this machine (docs/results.md).
    result["share_of_a_cached_check"] = result["added_ms_per_check"] / 220.0
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
