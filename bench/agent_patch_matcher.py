"""The patch matcher on the project's corpus of imperfect LLM diffs (tests/agent/diffs/): how many
placeable diffs it applies correctly, how many unplaceable/unsafe ones it refuses, and, for
comparison, what GNU patch (fuzz 2, the fenced/bare diff text given as is) does with the same replies.

    python bench/agent_patch_matcher.py [--out agent_patch_matcher.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from cutegen.agent.diff_text import extract_diff as _extract_diff  # noqa: E402
from tests.agent.diff_corpus import cases, judge  # noqa: E402


def gnu_patch(case) -> str:
    """'applied-correctly', 'applied-wrong', 'applied' (for reject cases) or 'refused'."""
    if shutil.which("patch") is None:
        return "n/a"
    diff, _, _ = _extract_diff(case.reply.replace("\r\n", "\n"))
    if case.finish == "length" or not diff:
        return "refused"  # GNU patch never sees a reply with no diff; count it as refused
    with tempfile.TemporaryDirectory() as d:
        target = Path(d) / case.base
        target.write_bytes(case.base_text.encode())
        proc = subprocess.run(["patch", "--batch", "--forward", "-F2", "-r", "-", "--no-backup-if-mismatch",
                               str(target)], input=diff, capture_output=True, text=True, timeout=30, cwd=d)
        if proc.returncode != 0:
            return "refused"
        text = target.read_bytes().decode(errors="replace")
    if case.expect == "reject":
        return "applied"
    ok = all(h in text for h in case.has) and not any(h in text for h in case.lacks)
    return "applied-correctly" if ok else "applied-wrong"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows, started = [], time.perf_counter()
    for c in cases():
        t = time.perf_counter()
        good, why, p = judge(c)
        rows.append({"case": c.name, "expect": c.expect, "passed": good, "why": why, "error": p.error,
                     "notes": p.notes, "ms": round((time.perf_counter() - t) * 1000, 2), "gnu_patch": gnu_patch(c),
                     "description": c.description})
    ok_cases = [r for r in rows if r["expect"] == "ok"]
    rej_cases = [r for r in rows if r["expect"] == "reject"]
    summary = {
        "cases": len(rows), "passed": sum(r["passed"] for r in rows),
        "placeable_applied_correctly": f"{sum(r['passed'] for r in ok_cases)}/{len(ok_cases)}",
        "unsafe_refused": f"{sum(r['passed'] for r in rej_cases)}/{len(rej_cases)}",
        "false_accepts": sum(1 for r in rej_cases if r["error"] is None),
        "gnu_patch_applied_correctly": f"{sum(r['gnu_patch'] == 'applied-correctly' for r in ok_cases)}/{len(ok_cases)}",
        "gnu_patch_applied_wrong": sum(r["gnu_patch"] == "applied-wrong" for r in ok_cases),
        "gnu_patch_false_accepts": f"{sum(r['gnu_patch'] == 'applied' for r in rej_cases)}/{len(rej_cases)}",
        "seconds": round(time.perf_counter() - started, 3),
    }
    for r in rows:
        mark = "ok  " if r["passed"] else "FAIL"
        print(f"{mark} {r['case']:<40} gnu-patch: {r['gnu_patch']:<18} {r['why'] or (r['error'] or '')[:70]}")
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0 if summary["passed"] == summary["cases"] else 1


if __name__ == "__main__":
    sys.exit(main())
