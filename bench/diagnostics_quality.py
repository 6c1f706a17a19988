"""Diagnostic quality against raw nvcc: does the first error land on the line a fixer changes, does it state the
root cause, and how much text does it take? Scored on recorded nvcc logs (real nvcc 13.0 output, kept in
tests/corpus/logs/), so the score runs in seconds; `--record` recompiles the corpus and rewrites the logs.

    python bench/diagnostics_quality.py [--corpus model_errors errors] [--record [--only NAME ...]] [--out results.json]

Per case (a corpus file with `// BUG` / `// BUG-ALT` fix lines and an `// expect-root:` phrase):
- exact: the first error is on a fix line; near: within 3 lines of one.
  nvcc's first error is where a reader of the raw log lands: the first error's line when it is in the user's
  file, else the innermost frame of its instantiation chain that is.
- root: the expect-root phrase is in the first diagnostic (message or root). For nvcc: in the text of the
  first error block of the log (namespaces and spaces around '=' normalised, so `CopyPolicy=cute::X` counts as
  `CopyPolicy = X`).
- size: the bytes `cutegen check` prints (every non-info diagnostic as `file:line:col: severity: message`)
  against the raw log's bytes.

`--test-path` also scores what `cutegen test` reports for a ModelNew file that does not build, from torch's own
load_inline failure text (recorded by `--record-load-inline` in logs/NAME.load_inline.log): the worker's own
mapping of that text to the Python lines (the old test-time path, and the fallback of the new one), replayed on
the files load_inline generates. The new test-time path reports the check's diagnostics: the cutegen column.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import inline_sources  # noqa: E402
from cutegen.diagnostics import condense, parse_log  # noqa: E402
from cutegen.model import Severity  # noqa: E402
from tests.support.paths import CORPUS  # noqa: E402
from tests.support.corpus import CorpusCase  # noqa: E402

# Recorded logs name library directories by placeholder (no machine paths in the repository).
PLACEHOLDERS = ("$CUTLASS_INCLUDE", "$TORCH_INCLUDE", "$PYTHON_INCLUDE", "$CUDA_INCLUDE")
NEAR = 3


def is_user(file: str) -> bool:
    return not file.startswith("$") and not file.startswith("/usr")


def lines_of(file: str) -> list[str]:
    """A file's lines as the check tier reads them (a ModelNew file: its CUDA strings only, in place)."""
    p = ROOT / file
    if not p.is_file():
        return []
    return inline_sources.checked_lines(p.read_text()) if p.suffix == ".py" else p.read_text().splitlines()


def cases(kinds: list[str]) -> list[CorpusCase]:
    """.cu kernels and ModelNew .py files (their annotations are comments inside the CUDA string)."""
    return [CorpusCase(p) for k in kinds for p in sorted([*(CORPUS / k).glob("*.cu"), *(CORPUS / k).glob("*.py")])]


def log_of(case: CorpusCase) -> str | None:
    p = CORPUS / "logs" / f"{case.path.stem}.log"
    return p.read_text() if p.is_file() else None


def nvcc_first(log: str) -> tuple[int | None, str]:
    """The line a reader of the raw log lands on, and the text of that first error block."""
    for m in parse_log(log):
        if m.severity not in ("error", "fatal"):
            continue
        line = m.line if m.file and is_user(m.file) else next((f.line for f in m.frames if is_user(f.file)), None)
        block = " ".join([m.text, *m.notes, *(f.what for f in m.frames[:1])])
        return line, block
    return None, ""


def _norm(text: str) -> str:
    text = re.sub(r"\b(?:cute|cutlass)::", "", text)
    return re.sub(r"\s*=\s*", " = ", text)


def score(case: CorpusCase, log: str) -> dict:
    rel = str(case.path.relative_to(ROOT))
    diagnostics = condense(parse_log(log), rel, is_user, lines_of)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    fix = case.bug_lines | case.alt_lines
    ours = errors[0].line if errors else None
    theirs, block = nvcc_first(log)
    printed = sum(len(d.format().encode()) + 1 for d in diagnostics if d.severity is not Severity.INFO)

    def near(line):
        return line is not None and any(abs(line - f) <= NEAR for f in fix)
    root = case.expect_root or ""
    return {
        "case": f"{case.path.parent.name}/{case.path.stem}", "fix_lines": sorted(fix),
        "cutegen_line": ours, "nvcc_line": theirs,
        "cutegen_exact": ours in fix, "nvcc_exact": theirs in fix,
        "cutegen_near": near(ours), "nvcc_near": near(theirs),
        "cutegen_root": bool(errors) and _norm(root) in _norm(errors[0].message + " " + errors[0].root),
        "nvcc_root": _norm(root) in _norm(block),
        "cutegen_bytes": printed, "nvcc_bytes": len(log.encode()),
        "first_message": errors[0].message if errors else "",
    }


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    out = {"cases": n}
    for who in ("cutegen", "nvcc"):
        for k in ("exact", "near", "root"):
            out[f"{who}_{k}"] = sum(r[f"{who}_{k}"] for r in rows) / n if n else 0.0
    out["size_ratio"] = sum(r["cutegen_bytes"] for r in rows) / max(1, sum(r["nvcc_bytes"] for r in rows))
    return out


def score_test_path(case: CorpusCase, log: str) -> dict:
    """The worker's mapping of a real load_inline failure, on regenerated build files."""
    from cutegen.compile.load_inline_failure import map_build_errors

    with tempfile.TemporaryDirectory() as build:
        prelude = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
        sources = [s.text for s in inline_sources.cuda_sources(case.text)]
        Path(build, "cuda.cu").write_text("\n".join(prelude + sources))
        diagnostics = map_build_errors(log.replace("$BUILD_DIR", build), case.path)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    fix = case.bug_lines | case.alt_lines
    line = errors[0].line if errors else None
    root = case.expect_root or ""
    return {"case": case.path.stem, "fix_lines": sorted(fix), "line": line, "exact": line in fix,
            "near": line is not None and any(abs(line - f) <= NEAR for f in fix), "on_line_1": line == 1,
            "none": not errors, "root": bool(errors) and _norm(root) in _norm(errors[0].message + " " + errors[0].root),
            "first_message": errors[0].message if errors else ""}


# -- recording -----------------------------------------------------------------------------------------------


def record_load_inline(case: CorpusCase) -> None:
    """Run the ModelNew file as `cutegen test`'s worker does (torch's own load_inline builds its sources) and keep
    the failure text, paths as placeholders. A CPU-only torch refuses CUDA sources (it has no CUDA_HOME); pointed
    at the toolkit it compiles them, which is all a build that fails at compile time needs."""
    import runpy

    import torch.utils.cpp_extension as ext

    from cutegen.toolchain import discover, torch_include_dirs

    tc = discover()
    ext.CUDA_HOME = ext.CUDA_HOME or tc.cuda_root
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    with tempfile.TemporaryDirectory() as build:
        os.environ["TORCH_EXTENSIONS_DIR"] = build
        try:
            runpy.run_path(str(case.path))
            text = ""
        except Exception as e:  # noqa: BLE001 - the failure is what is recorded
            text = f"{type(e).__name__}: {e}"
        folder = next((str(p.parent) for p in Path(build).rglob("cuda.cu")), build)
        places = {folder: "$BUILD_DIR", os.path.join(tc.cuda_root, "include"): "$CUDA_INCLUDE", tc.cuda_root: "$CUDA",
                  tc.cutlass_include: "$CUTLASS_INCLUDE"}
        dirs = torch_include_dirs()
        if dirs:
            places[dirs[0]] = "$TORCH_INCLUDE"
            places[dirs[-1]] = "$PYTHON_INCLUDE"
        for real, placeholder in sorted(places.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(real, placeholder)
    (CORPUS / "logs" / f"{case.path.stem}.load_inline.log").write_text(text)
    print(f"  recorded load_inline of {case.path.name}: {len(text)} B", flush=True)




def record(case: CorpusCase) -> None:
    """Compile the case with the check tier's flags; keep the log with library paths as placeholders."""
    from cutegen.compile import Builder, Tier
    from cutegen.settings import Settings
    from cutegen.toolchain import discover, includes_torch, torch_include_dirs

    settings = Settings()
    tc = discover(settings)
    builder = Builder(tc, settings, Path("/tmp/cutegen-record"))
    rel = case.path.relative_to(ROOT)
    compiled, source = case.text, str(rel)
    if case.path.suffix == ".py":  # as the check tier compiles a ModelNew file: its load_inline sources
        compiled = inline_sources.as_cuda_file(rel, inline_sources.cuda_sources(case.text))
        source = f"/tmp/cutegen-record-{case.path.stem}.cu"
        Path(source).write_text(compiled)
    flags = builder._flags(Tier.CHECK, case.path, includes_torch(compiled))
    command = [tc.nvcc, *flags, source, "-o", "/tmp/cutegen-record.ptx"]
    log = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    places = {tc.cutlass_include: "$CUTLASS_INCLUDE", str(case.path.parent): str(rel.parent), source: str(rel)}
    dirs = torch_include_dirs()
    if dirs:
        places[dirs[0]] = "$TORCH_INCLUDE"
        places[dirs[-1]] = "$PYTHON_INCLUDE"
    places[os.path.join(tc.cuda_root, "include")] = "$CUDA_INCLUDE"
    text, cmd = log.stdout + log.stderr, " ".join(command[1:])
    for real, placeholder in sorted(places.items(), key=lambda kv: -len(kv[0])):
        text, cmd = text.replace(real, placeholder), cmd.replace(real, placeholder)
    cmd = cmd.replace(str(ROOT / "server"), "server")
    if case.path.suffix == ".py":
        cmd = cmd.replace(f" {rel} -o", f" <the load_inline sources of {rel}, as_cuda_file> -o")
    (CORPUS / "logs" / f"{case.path.stem}.log").write_text(text)
    (CORPUS / "logs" / f"{case.path.stem}.cmd").write_text(f"nvcc {cmd}\n")
    print(f"  recorded {rel}: rc={log.returncode}, {len(text)} B", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", nargs="+", default=["model_errors", "errors"])
    ap.add_argument("--record", action="store_true", help="recompile the cases and rewrite their logs first")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="record (and score) only these cases (file stems)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--test-path", action="store_true", help="also score the worker's mapping of load_inline failures")
    ap.add_argument("--record-load-inline", action="store_true", help="rebuild the ModelNew cases with load_inline "
                    "first and rewrite their logs/NAME.load_inline.log (minutes each: torch's headers, twice)")
    args = ap.parse_args()
    results = {}
    for kind in args.corpus:
        rows = []
        for case in cases([kind]):
            if args.only and case.path.stem not in args.only:
                continue
            if args.record:
                record(case)
            log = log_of(case)
            if log is not None:
                rows.append(score(case, log))
        results[kind] = {"summary": summary(rows), "rows": rows}
        _print(kind, rows, results[kind]["summary"])
        if (args.test_path or args.record_load_inline) and any(c.path.suffix == ".py" for c in cases([kind])):
            results[f"{kind}:test-path"] = _test_path(kind, args)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


def _test_path(kind: str, args) -> dict:
    rows = []
    for case in cases([kind]):
        if case.path.suffix != ".py" or (args.only and case.path.stem not in args.only):
            continue
        if args.record_load_inline:
            record_load_inline(case)
        log = CORPUS / "logs" / f"{case.path.stem}.load_inline.log"
        if log.is_file():
            rows.append(score_test_path(case, log.read_text()))
    n = max(1, len(rows))
    s = {"cases": len(rows), **{k: sum(r[k] for r in rows) / n for k in ("exact", "near", "root", "on_line_1", "none")}}
    print(f"\n{kind}, the worker's own mapping of load_inline's failure ({len(rows)} ModelNew cases):")
    for r in rows:
        print(f"  {r['case']:<42} fix {str(r['fix_lines']):<10} line {str(r['line']):>4}  {r['first_message'][:70]}")
    print(f"  exact {s['exact']:.0%}, ±{NEAR} {s['near']:.0%}, root {s['root']:.0%}, on line 1 {s['on_line_1']:.0%}, "
          f"no diagnostic {s['none']:.0%}")
    return {"summary": s, "rows": rows}


def _print(kind: str, rows: list[dict], s: dict) -> None:
    print(f"\n{kind}: {s['cases']} cases")
    for r in rows:
        mark = lambda ok: "✓" if ok else "·"  # noqa: E731
        print(f"  {r['case']:<42} fix {str(r['fix_lines']):<10} cutegen {str(r['cutegen_line']):>4} "
              f"{mark(r['cutegen_near'])}{mark(r['cutegen_root'])}  nvcc {str(r['nvcc_line']):>4} "
              f"{mark(r['nvcc_near'])}{mark(r['nvcc_root'])}")
    print(f"  first error on a fix line: cutegen {s['cutegen_exact']:.0%} (±{NEAR}: {s['cutegen_near']:.0%}), "
          f"nvcc {s['nvcc_exact']:.0%} (±{NEAR}: {s['nvcc_near']:.0%})")
    print(f"  root cause stated: cutegen {s['cutegen_root']:.0%}, nvcc {s['nvcc_root']:.0%}")
    print(f"  output size: cutegen ÷ nvcc log = 1/{1 / max(s['size_ratio'], 1e-9):.1f}")


if __name__ == "__main__":
    main()
