"""Edit formats on the replay corpus (tests/agent/replays/) and the diff corpus (tests/agent/diffs/):
per format, how many placeable replies are placed correctly (the exact expected file for replays),
how many unsafe ones are refused (with the right reason class for replays), how many are wrongly
applied; and, where the reply is a unified diff, what GNU patch (fuzz 2, given the diff text the
reply holds) does with it, and for the other formats what the naive applier of that format does
(exact string replacement, literal line numbers, the first code block); and whether every diff CuTeGen
prints applies as printed with GNU `patch -p1` (no fuzz) and `git apply` (the same file as placed).

    python bench/agent_edit_formats.py [--out agent_edit_formats.json]
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

from cutegen.agent.edit_formats import EditRefused, strip_thinking  # noqa: E402
from cutegen.agent.diff_text import extract_diff as _extract_diff  # noqa: E402
from tests.agent import diff_corpus, replay_corpus  # noqa: E402


def gnu_patch(reply: str, base_text: str, name: str, finish: str, expected: str | None, check=None) -> str:
    """'correct', 'wrong' (applied, not the expected file), 'applied' (to a reply that must be refused),
    'refused', or 'n/a' without GNU patch."""
    if shutil.which("patch") is None:
        return "n/a"
    try:
        text = strip_thinking(reply.replace("\r\n", "\n"))
    except EditRefused:
        return "refused"
    diff, _, _ = _extract_diff(text)
    if finish == "length" or not diff:
        return "refused"  # GNU patch never sees a reply with no diff in it
    with tempfile.TemporaryDirectory() as d:
        target = Path(d) / name
        target.write_bytes(base_text.encode())
        proc = subprocess.run(["patch", "--batch", "--forward", "-F2", "-r", "-", "--no-backup-if-mismatch",
                               str(target)], input=diff, capture_output=True, text=True, timeout=30, cwd=d)
        if proc.returncode != 0:
            return "refused"
        result = target.read_bytes().decode(errors="replace")
    if expected is None and check is None:
        return "applied"
    good = result == expected if check is None else check(result)
    return "correct" if good else "wrong"


def naive(case) -> str:
    """What the simplest applier of the reply's own format does (the baseline where GNU patch does
    not apply): SEARCH/REPLACE as exact first-occurrence string replacement of every block in the
    reply, JSON line numbers applied literally bottom-up to the current file (CuTeGen's own way),
    the first code block taken as the file. Outcomes as for gnu_patch."""
    import re

    from cutegen.agent import edit_formats as ef

    text, reply = case.base_text, case.reply.replace("\r\n", "\n")
    try:
        if case.written == "search-replace":
            for m in ef._SR_BLOCK.finditer(reply):
                if not m.group("search") or m.group("search") not in text:
                    return "refused"
                text = text.replace(m.group("search"), m.group("replace"), 1)
        elif case.written == "json":
            data, _ = ef._json_payload(ef.strip_thinking(reply))
            data = data.get("edits", [data]) if isinstance(data, dict) else data
            lines = text.split("\n")
            for e in sorted(data, key=lambda e: int(e["line_number"]), reverse=True):  # stable: listed order at one line
                n, new = int(e["line_number"]) - 1, _original_lines(e.get("new_code", ""))
                k = 0 if e["action"] == "insert" else int(e.get("num_lines", 1))
                lines[n:n + k] = [] if e["action"] == "delete" else new
            text = "\n".join(lines)
        elif case.written == "whole":
            m = re.search(r"```\w*\n(.*?)```", reply, re.S)
            if not m:
                return "refused"
            text = m.group(1)
        else:
            return "n/a"
    except Exception:  # a naive applier simply fails on what it cannot read
        return "refused"
    if text == case.base_text:
        return "refused"
    if case.expect != "placed":
        return "applied"
    return "correct" if text == case.expected_text() else "wrong"


def _original_lines(value) -> list[str]:
    """new_code as CuTeGen's original applier reads it: str.splitlines() of a string or of each list entry."""
    if isinstance(value, str):
        return value.splitlines()
    return [line for x in value for line in x.splitlines()] if isinstance(value, list) else []


def printed(p, base_text: str, name: str) -> tuple[str, str]:
    """('applies'|'fails'|'n/a', same) for GNU patch and git apply on the diff CuTeGen printed."""
    if not p.ok or shutil.which("patch") is None or shutil.which("git") is None:
        return "n/a", "n/a"
    got = replay_corpus.apply_externally(p.diff, base_text, name)
    return tuple("applies" if ok and text == p.new_text else "fails" for ok, text in got.values())


def replay_rows() -> list[dict]:
    rows = []
    for c in replay_corpus.replays():
        t = time.perf_counter()
        good, why, p = replay_corpus.judge(c)
        ms = (time.perf_counter() - t) * 1000
        gnu = "n/a"
        if c.written == "diff":
            gnu = gnu_patch(c.reply, c.base_text, Path(c.base).name, c.finish,
                            c.expected_text() if c.expect == "placed" else None)
        by_patch, by_git = printed(p, c.base_text, Path(c.base).name)
        rows.append({"corpus": "replays", "case": c.name, "format": c.written, "ask": c.ask,
                     "placeable": c.expect == "placed", "passed": good, "applied": bool(p.ok), "why": why,
                     "kind": p.kind, "error": p.error, "ms": round(ms, 2), "gnu_patch": gnu, "naive": naive(c),
                     "printed_patch": by_patch, "printed_git": by_git})
    return rows


def diff_rows() -> list[dict]:
    rows = []
    for c in diff_corpus.cases():
        t = time.perf_counter()
        good, why, p = diff_corpus.judge(c)
        ms = (time.perf_counter() - t) * 1000
        check = (lambda text, c=c: all(h in text for h in c.has) and not any(h in text for h in c.lacks))
        gnu = gnu_patch(c.reply, c.base_text, c.base, c.finish, None, check if c.expect == "ok" else None)
        by_patch, by_git = printed(p, c.base_text, c.base)
        rows.append({"corpus": "diffs", "case": c.name, "format": "diff", "ask": "auto", "placeable": c.expect == "ok",
                     "passed": good, "applied": bool(p.ok), "why": why, "kind": p.kind, "error": p.error,
                     "ms": round(ms, 2), "gnu_patch": gnu, "naive": "n/a", "printed_patch": by_patch,
                     "printed_git": by_git})
    return rows


def table(rows: list[dict]) -> list[dict]:
    out = []
    groups = {}
    for r in rows:
        groups.setdefault(r["format"], []).append(r)
    for fmt, rs in sorted(groups.items()) + [("all", rows)]:
        ok = [r for r in rs if r["placeable"]]
        bad = [r for r in rs if not r["placeable"]]
        diffs_ok = [r for r in ok if r["gnu_patch"] != "n/a"]
        diffs_bad = [r for r in bad if r["gnu_patch"] != "n/a"]
        naive_ok = [r for r in ok if r["naive"] != "n/a"]
        naive_bad = [r for r in bad if r["naive"] != "n/a"]
        out.append({
            "format": fmt, "cases": len(rs),
            "placed_correctly": f"{sum(r['passed'] for r in ok)}/{len(ok)}",
            "refused_right_reason": f"{sum(r['passed'] for r in bad)}/{len(bad)}",
            "wrongly_applied": sum(r["applied"] for r in bad) + sum(r["applied"] and not r["passed"] for r in ok),
            "gnu_patch_correct": f"{sum(r['gnu_patch'] == 'correct' for r in diffs_ok)}/{len(diffs_ok)}" if diffs_ok else "n/a",
            "gnu_patch_wrongly_applied": (sum(r["gnu_patch"] == "applied" for r in diffs_bad)
                                          + sum(r["gnu_patch"] == "wrong" for r in diffs_ok)) if diffs_ok or diffs_bad else "n/a",
            "naive_correct": f"{sum(r['naive'] == 'correct' for r in naive_ok)}/{len(naive_ok)}" if naive_ok else "n/a",
            "naive_wrongly_applied": (sum(r["naive"] == "applied" for r in naive_bad)
                                      + sum(r["naive"] == "wrong" for r in naive_ok)) if naive_ok or naive_bad else "n/a",
            "printed_diff_applies": _applies(rs),
        })
    return out


def _applies(rows: list[dict]) -> str:
    """'N/M · N/M': printed diffs GNU patch and git apply turn into the placed file, of those printed."""
    shown = [r for r in rows if r.get("printed_patch", "n/a") != "n/a"]
    if not shown:
        return "n/a"
    return " · ".join(f"{sum(r[k] == 'applies' for r in shown)}/{len(shown)}" for k in ("printed_patch", "printed_git"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    started = time.perf_counter()
    rows = replay_rows() + diff_rows()
    for r in rows:
        if not r["passed"]:
            print(f"FAIL {r['corpus']}/{r['case']}: {r['why']}")
    summary = table(rows)
    cols = ["format", "cases", "placed_correctly", "refused_right_reason", "wrongly_applied", "gnu_patch_correct",
            "gnu_patch_wrongly_applied", "naive_correct", "naive_wrongly_applied", "printed_diff_applies"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for s in summary:
        print("| " + " | ".join(str(s[c]) for c in cols) + " |")
    ms = sorted(r["ms"] for r in rows)
    print(f"{len(rows)} replies in {time.perf_counter() - started:.2f} s; median {ms[len(ms) // 2]:.2f} ms, "
          f"max {ms[-1]:.2f} ms per reply")
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0 if all(r["passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
