"""Knowledge-base measurements: retrieval accuracy on the project's error corpus and the share of snippets that
do what their entries claim under the real check tier.

    python bench/knowledge_retrieval.py [--out FILE.json] [--state DIR]

Retrieval: every tests/corpus/errors kernel is built with the check tier; its first error diagnostic is the
query. Every tests/corpus/silent kernel is built for its arch; the warning the corpus expects is the query.
The right answer is the catalog entry that lists the kernel under `corpus:` (one per class). Reported with the
full ranking (exact recognizers + BM25) and with BM25 alone (the ablation). Runtime failures: real reports from
the harness's comparator (cutegen.harness.compare) for each mismatch pattern, and the harness's verdict messages.
Snippets: fix_before must fail/warn with its own entry's recognizer, fix_after must compile clean; idiom kernels
must compile clean.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.knowledge import KnowledgeBase  # noqa: E402
from cutegen.knowledge.snippets import check_all  # noqa: E402
from cutegen.model import Severity  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402


def header(text: str, key: str) -> str | None:
    m = re.search(rf"^//\s*{key}:\s*(.+?)\s*$", text, re.M)
    return m.group(1) if m else None


def rank(kb, expected: str, **query) -> dict:
    full = [h.entry.id for h in kb.search(k=3, **query)]
    bm25 = [h.entry.id for h in kb.search(k=3, exact=False, **query)]
    return {"expected": expected, "top3": full, "top3_bm25_only": bm25,
            "top1_ok": bool(full) and full[0] == expected, "top3_ok": expected in full,
            "bm25_top1_ok": bool(bm25) and bm25[0] == expected, "bm25_top3_ok": expected in bm25}


def corpus_queries(kb, builders, state: Path) -> list[dict]:
    owner = {c: e.id for e in kb.entries for c in e.corpus}
    rows = []
    for kind in ("errors", "silent"):
        for path in sorted((ROOT / "tests" / "corpus" / kind).glob("*.cu")):
            text = path.read_text()
            arch = header(text, "cutegen-arch")
            if arch not in builders:
                settings = Settings(arch=arch)
                builders[arch] = Builder(discover(settings), settings, state)
            result = builders[arch].run(Tier.CHECK, path)
            if kind == "errors":
                query = result.errors[0]
            else:
                want = header(text, "expect-warning") or ""
                query = next(d for d in result.diagnostics if d.severity is Severity.WARNING and want in d.message)
            row = {"case": f"{kind}/{path.stem}", "message": query.message[:160], **rank(kb, owner[path.stem], diagnostic=query)}
            rows.append(row)
    return rows


def runtime_queries(kb) -> list[dict]:
    sys.path.insert(0, str(ROOT / "tests" / "knowledge"))
    from tests.knowledge.test_retrieval import RUNTIME, VERDICTS, _mismatch

    rows = []
    for pattern, expected in RUNTIME.items():
        report = _mismatch(pattern)
        rows.append({"case": f"mismatch/{pattern}", "message": report["message"][:160],
                     **rank(kb, expected, mismatch=report, verdict="mismatch")})
    for verdict, message, expected in VERDICTS:
        rows.append({"case": f"verdict/{verdict}", "message": message[:160],
                     **rank(kb, expected, verdict=verdict, message=message)})
    return rows


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    return {"n": n, "top1": sum(r["top1_ok"] for r in rows) / n, "top3": sum(r["top3_ok"] for r in rows) / n,
            "bm25_only_top1": sum(r["bm25_top1_ok"] for r in rows) / n,
            "bm25_only_top3": sum(r["bm25_top3_ok"] for r in rows) / n}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--state", help="build cache directory (default: a fresh temporary one)")
    args = ap.parse_args()
    state = Path(args.state) if args.state else Path(tempfile.mkdtemp(prefix="cutegen-kb-bench-"))
    started = time.perf_counter()
    kb = KnowledgeBase.load()
    problems = kb.problems()
    settings = Settings()
    builders = {None: Builder(discover(settings), settings, state)}

    corpus_rows = corpus_queries(kb, builders, state)
    runtime_rows = runtime_queries(kb)
    outcomes = check_all(kb, [e for e in kb.entries if e.fix_before or e.fix_after], builders, state)
    kernels = sorted({e.kernel for e in kb.entries if e.kernel})
    kernel_rows = []
    for k in kernels:
        r = builders[None].run(Tier.CHECK, ROOT / k)
        clean = r.ok and not [d for d in r.diagnostics if d.severity is not Severity.INFO]
        kernel_rows.append({"kernel": k, "compiles_clean": clean})

    kinds = {k: sum(e.kind == k for e in kb.entries) for k in ("error", "idiom", "optimization")}
    snippets_ok = sum(o.ok for o in outcomes)
    compiled = [o for o in outcomes if o.side == "after" or o.expect != "fail"]
    result = {
        "entries": len(kb.entries), "by_kind": kinds, "schema_problems": problems,
        "retrieval_corpus": summary(corpus_rows), "retrieval_runtime": summary(runtime_rows),
        "snippets": {"total": len(outcomes), "as_claimed": snippets_ok, "share_as_claimed": snippets_ok / len(outcomes),
                     "meant_to_compile": len(compiled), "compile": sum(o.compiled for o in compiled),
                     "share_that_compile": sum(o.compiled for o in compiled) / len(compiled),
                     "fail_as_claimed": sum(o.ok for o in outcomes if o.expect == "fail"),
                     "meant_to_fail": sum(o.expect == "fail" for o in outcomes)},
        "idiom_kernels": {"total": len(kernel_rows), "compile_clean": sum(r["compiles_clean"] for r in kernel_rows),
                          "rows": kernel_rows},
        "corpus_rows": corpus_rows, "runtime_rows": runtime_rows,
        "snippet_failures": [o.__dict__ for o in outcomes if not o.ok],
        "seconds": time.perf_counter() - started,
    }
    c, r, s = result["retrieval_corpus"], result["retrieval_runtime"], result["snippets"]
    print(f"entries: {len(kb.entries)} ({kinds['error']} errors, {kinds['idiom']} idioms, {kinds['optimization']} menu items); "
          f"schema problems: {len(problems)}")
    print(f"corpus retrieval ({c['n']} kernels, real check tier): top-1 {c['top1']:.0%}, top-3 {c['top3']:.0%}; "
          f"BM25 alone: top-1 {c['bm25_only_top1']:.0%}, top-3 {c['bm25_only_top3']:.0%}")
    print(f"runtime retrieval ({r['n']} reports/verdicts): top-1 {r['top1']:.0%}, top-3 {r['top3']:.0%}; "
          f"BM25 alone: top-1 {r['bm25_only_top1']:.0%}, top-3 {r['bm25_only_top3']:.0%}")
    print(f"snippets: {s['as_claimed']}/{s['total']} do what their entry claims; {s['compile']}/{s['meant_to_compile']} "
          f"meant to compile do ({s['share_that_compile']:.0%}); {s['fail_as_claimed']}/{s['meant_to_fail']} broken ones "
          "fail with their own entry's pattern")
    print(f"idiom kernels compiling clean: {result['idiom_kernels']['compile_clean']}/{len(kernel_rows)}")
    for row in corpus_rows + runtime_rows:
        if not row["top1_ok"]:
            print(f"  not top-1: {row['case']}: expected {row['expected']}, got {row['top3']}")
    print(f"({result['seconds']:.0f} s)")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    return 0 if not problems and snippets_ok == len(outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
