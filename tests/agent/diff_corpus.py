"""The corpus of imperfect LLM diffs under tests/agent/diffs/ and how one case is judged.

A case file is a header (`base:`, `expect: ok|reject`, `has:`/`lacks:` lines the result must or must
not contain, `changed:` removed-line count, `reason:` a substring of the rejection, `finish:`,
`crlf-reply:`, `crlf-base:`) and, after `=== reply`, the reply exactly as an LLM sent it.
Used by tests/agent/test_patch.py and bench/agent_patch_matcher.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DIFFS = Path(__file__).resolve().parent / "diffs"


@dataclass
class Case:
    name: str
    base: str
    reply: str
    expect: str
    description: str = ""
    has: list[str] = field(default_factory=list)
    lacks: list[str] = field(default_factory=list)
    changed: int | None = None
    reason: str = ""
    finish: str = "stop"
    base_text: str = ""


def _unescape(s: str) -> str:
    return s.replace("\\r", "\r").replace("\\n", "\n")


def load(path: Path) -> Case:
    head, reply = path.read_text().split("=== reply\n", 1)
    meta: dict[str, list[str]] = {}
    description = ""
    for line in head.splitlines():
        if line.startswith("#"):
            description = description or line.lstrip("# ").strip()
            continue
        key, _, value = line.partition(":")
        meta.setdefault(key.strip(), []).append(value[1:] if value.startswith(" ") else value)
    one = lambda k, d="": meta.get(k, [d])[0].strip()
    base_text = (DIFFS / "base" / one("base")).read_text()
    if one("crlf-base") == "yes":
        base_text = base_text.replace("\n", "\r\n")
    if one("crlf-reply") == "yes":
        reply = reply.replace("\n", "\r\n")
    return Case(path.stem, one("base"), reply, one("expect"), description,
                [_unescape(h) for h in meta.get("has", [])], [_unescape(h) for h in meta.get("lacks", [])],
                int(one("changed")) if one("changed") else None, one("reason"), one("finish", "stop"), base_text)


def cases() -> list[Case]:
    return [load(p) for p in sorted(DIFFS.glob("*.txt"))]


def judge(case: Case) -> tuple[bool, str, object]:
    """(the matcher did what the case expects, why not, the Patch)."""
    from cutegen.agent.patch import apply_reply

    p = apply_reply(case.reply, case.base_text, case.base, finish_reason=case.finish)
    if case.expect == "reject":
        if p.ok:
            return False, "accepted a patch that must be rejected", p
        if case.reason.lower() not in (p.error or "").lower():
            return False, f"rejected for another reason: {p.error}", p
        return True, "", p
    if not p.ok:
        return False, f"rejected: {p.error}", p
    for h in case.has:
        if h not in p.new_text:
            return False, f"result lacks {h!r}", p
    for h in case.lacks:
        if h in p.new_text:
            return False, f"result still has {h!r}", p
    if case.changed is not None and p.removed != case.changed:
        return False, f"removed {p.removed} lines, expected {case.changed}", p
    return True, "", p
