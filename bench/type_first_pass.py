"""The type tier's first pass against its full parse, on the error corpora and the clean kernels (examples, corpus,
tests/kernels, tests/layouts): do they report the same errors? The first pass (typecheck/clang_parse.py,
FIRST_PASS) parses the file as a translation-unit prefix, which skips clang's end-of-TU work; what that work can add is CUDA's deferred diagnostics (and warnings, which
this tier does not report). Both run here against the plain header set (a warm one serves only slow files), in
this process's order: full, then first, per file.

    PYTHONPATH=server python bench/type_first_pass.py [--out type_first_pass.json]

Reports per corpus the files whose errors (line and message) agree, each disagreement, and the two passes' median
time ratio (against the plain PCH, where the file's own instantiations dominate both: the first pass saves little;
against a warm one it is all but the file's own parse, bench/type_tier.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402
from cutegen.typecheck.checker import TypeChecker, _Job  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
GROUPS = {
    "errors": sorted((CORPUS / "errors").glob("*.cu")),
    "model_errors": sorted((CORPUS / "model_errors").glob("*.cu")),
    "clean": sorted({*ROOT.glob("examples/**/*.cu"), *(CORPUS / "clean").glob("*.cu"), *(CORPUS / "silent").glob("*.cu"),
                     *(ROOT / "tests" / "kernels").glob("*.cu"), *(ROOT / "tests" / "layouts").glob("*.cu")}),
}


def errors(checker: TypeChecker, path: Path, text: str, answer: dict) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in checker._answered(path, text, [], answer, 0.0).errors]


def compare(checker: TypeChecker, path: Path) -> dict:
    text = path.read_text()
    args = checker.arguments(path, text)
    pch, _ = checker._ready_pch(checker._pch(path, text, args))
    request = {"file": str(path), "text": text, "args": args, "pch": pch}
    out = {}
    for name, extra in (("full", {}), ("first", {"first_pass": True})):
        started = time.perf_counter()
        answer = checker._child({**request, **extra}, _Job())
        out[name] = {"seconds": time.perf_counter() - started, "errors": errors(checker, path, text, answer)}
    out["agree"] = out["full"]["errors"] == out["first"]["errors"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", type=Path, default=Path("/tmp/cutegen-first-pass"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    checker = TypeChecker(discover(Settings()), Settings(check_timeout=900), args.state, warm_after_s=None)
    report = {}
    for group, files in GROUPS.items():
        rows = {}
        for path in files:
            rows[str(path.relative_to(ROOT))] = row = compare(checker, path.resolve())
            mark = "agree" if row["agree"] else f"DIFFER full {row['full']['errors']} first {row['first']['errors']}"
            print(f"{group}: {path.name}: full {row['full']['seconds']:.1f} s, first {row['first']['seconds']:.1f} s, "
                  f"{mark}", flush=True)
        agree = sum(r["agree"] for r in rows.values())
        ratio = statistics.median(r["first"]["seconds"] / r["full"]["seconds"] for r in rows.values())
        report[group] = {"files": len(rows), "agree": agree, "first_over_full_p50": ratio, "rows": rows}
        print(f"{group}: {agree}/{len(rows)} agree; first pass ÷ full parse, median {ratio:.2f}x", flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
