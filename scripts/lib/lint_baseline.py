"""Compares ruff's and mypy's findings with the committed baseline (scripts/lint.sh runs it).

A finding is one line, `path: code: message`, without its line number: moving code does not change it, so the
baseline churns only when a finding appears or goes. The baseline is a multiset: two identical findings in one
file are two lines, and fixing one of them shrinks it by one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HEADER = "# {tool} findings tolerated for now (scripts/lint.sh). Only ever shrinks: fix one, then run --update.\n"

# `server/cutegen/x.py:12: error: Message  [code]` (notes, which elaborate an error, are not findings)
MYPY_LINE = re.compile(r"^(?P<path>[^:\s]+):\d+(?::\d+)?: error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$")
# mypy names other lines in some messages ("defined on line 45"): those numbers churn like line numbers do.
ON_LINE = re.compile(r"\bon line \d+")


def ruff_findings(raw: str, root: Path) -> Counter[str]:
    """ruff's JSON output as findings, paths relative to the repository root."""
    findings: Counter[str] = Counter()
    for item in json.loads(raw or "[]"):
        path = Path(item["filename"]).resolve().relative_to(root).as_posix()
        findings[f"{path}: {item['code'] or 'syntax'}: {item['message']}"] += 1
    return findings


def mypy_findings(raw: str) -> Counter[str]:
    """mypy's error lines as findings; anything else it prints (notes) is not one."""
    findings: Counter[str] = Counter()
    for line in raw.splitlines():
        match = MYPY_LINE.match(line)
        if match:
            message = ON_LINE.sub("on line N", match["message"])
            findings[f"{match['path']}: {match['code'] or 'error'}: {message}"] += 1
    return findings


def read_baseline(path: Path) -> Counter[str]:
    if not path.exists():
        return Counter()
    lines = path.read_text().splitlines()
    return Counter(line for line in lines if line and not line.startswith("#"))


def write_baseline(path: Path, tool: str, findings: Counter[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{finding}\n" for finding in sorted(findings.elements()))
    path.write_text(HEADER.format(tool=tool) + body)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ruff", type=Path, required=True, help="ruff check --output-format json")
    parser.add_argument("--mypy", type=Path, required=True, help="mypy's output")
    parser.add_argument("--baseline", type=Path, required=True, help="the folder of ruff.txt and mypy.txt")
    parser.add_argument("--update", action="store_true", help="rewrite the baseline to the findings of now")
    parser.add_argument("--allow-growth", action="store_true", help="with --update: let the baseline grow")
    args = parser.parse_args(argv)

    root = Path.cwd().resolve()
    found = {
        "ruff": ruff_findings(args.ruff.read_text(), root),
        "mypy": mypy_findings(args.mypy.read_text()),
    }
    new_total = gone_total = 0
    for tool, findings in found.items():
        baseline = read_baseline(args.baseline / f"{tool}.txt")
        new, gone = findings - baseline, baseline - findings
        new_total += new.total()
        gone_total += gone.total()
        print(f"lint.sh: {tool}: {findings.total()} findings, baseline {baseline.total()}, "
              f"{new.total()} new, {gone.total()} gone")
        for finding in sorted(new.elements()):
            print(f"  new: {finding}")

    if args.update:
        if new_total and not args.allow_growth:
            print(f"lint.sh: refusing to add {new_total} new findings to the baseline: fix them, or pass "
                  "--allow-growth if they must stay (say why in the commit)")
            return 1
        for tool, findings in found.items():
            write_baseline(args.baseline / f"{tool}.txt", tool, findings)
        print("lint.sh: baseline rewritten")
        return 0
    if gone_total:
        print(f"lint.sh: the baseline can shrink by {gone_total}: run scripts/lint.sh --update")
    if new_total:
        print(f"lint.sh: {new_total} findings not in the baseline (above): fix them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
