"""The replay corpus: replies written the way real models write them, in every edit format, each with
the outcome it must get. Cases live in tests/agent/replays/*.txt:

    # one line saying what the case is
    base: slow.cu            the file as it is now (replays/base/, else diffs/base/); a folder in
                             front (moved/slow.cu) keeps the name: the edit is for slow.cu
    shown: slow.cu           the file as the model saw it (default: base); JSON line numbers refer to it
    written: json            the format the reply is written in (diff|search-replace|json|whole|none)
    ask: auto                cutegen.llmEditFormat for this case (default auto)
    expect: placed|refused
    refuse: elision          the refusal class (edit_formats.REFUSALS) for expect: refused
    sub: OLD => NEW          for expect: placed, the exact expected file is base with each sub applied
                             once (\\n in OLD/NEW for line breaks); repeatable
    finish: length           the endpoint's finish_reason (default stop)
    crlf-reply: yes          the reply's lines end in CRLF
    === reply
    (the reply exactly as the model sent it)

Used by tests/agent/test_edit_formats.py and bench/agent_edit_formats.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPLAYS = HERE / "replays"
BASES = (REPLAYS / "base", HERE / "diffs" / "base")


@dataclass
class Replay:
    name: str
    description: str
    base: str
    base_text: str
    shown_text: str | None
    written: str
    ask: str
    expect: str
    refuse: str
    subs: list[tuple[str, str]] = field(default_factory=list)
    finish: str = "stop"
    reply: str = ""

    def expected_text(self) -> str:
        text = self.base_text
        for old, new in self.subs:
            assert text.count(old) == 1, f"{self.name}: sub {old!r} occurs {text.count(old)} times in {self.base}"
            text = text.replace(old, new)
        return text


def _read_base(name: str) -> str:
    for d in BASES:
        if (d / name).is_file():
            return (d / name).read_text()
    raise FileNotFoundError(name)


def _unescape(s: str) -> str:
    return s.replace("\\n", "\n")


def load(path: Path) -> Replay:
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
    if one("crlf-reply") == "yes":
        reply = reply.replace("\n", "\r\n")
    subs = [tuple(_unescape(p) for p in s.split(" => ", 1)) for s in meta.get("sub", [])]
    return Replay(path.stem, description, one("base"), _read_base(one("base")),
                  _read_base(one("shown")) if one("shown") else None, one("written"), one("ask", "auto"),
                  one("expect"), one("refuse"), subs, one("finish", "stop"), reply)


def replays() -> list[Replay]:
    return [load(p) for p in sorted(REPLAYS.glob("*.txt"))]


def judge(case: Replay, reply: str | None = None, finish: str | None = None) -> tuple[bool, str, object]:
    """(the outcome is the one the case must get, why not, the Patch). `reply`/`finish` override the
    case's own (the reply as it came back through the scripted endpoint)."""
    from cutegen.agent.patch import apply_reply

    p = apply_reply(case.reply if reply is None else reply, case.base_text, Path(case.base).name,
                    finish_reason=case.finish if finish is None else finish, fmt=case.ask, shown=case.shown_text)
    if case.expect == "refused":
        if p.ok:
            return False, "applied an edit that must be refused", p
        if p.kind != case.refuse:
            return False, f"refused as {p.kind!r}, expected {case.refuse!r}: {p.error}", p
        return True, "", p
    if not p.ok:
        return False, f"refused ({p.kind}): {p.error}", p
    if p.new_text != case.expected_text():
        return False, "placed, but the result is not the expected file", p
    return True, "", p


TOOLS = {"patch -p1": ["patch", "-p1", "--batch", "--forward", "--fuzz=0", "--no-backup-if-mismatch"],
         "git apply": ["git", "apply", "-p1", "--whitespace=nowarn", "-"]}


def apply_externally(diff: str, base_text: str | None, name: str) -> dict[str, tuple[bool, str]]:
    """What GNU patch (exact: no fuzz) and `git apply` make of a printed diff, each in a fresh folder holding
    `name` with `base_text` (None: no such file yet): tool → (applied, the file's text or the tool's error)."""
    import subprocess
    import tempfile

    out = {}
    for tool, command in TOOLS.items():
        with tempfile.TemporaryDirectory() as d:
            target = Path(d) / name
            subprocess.run(["git", "init", "-q", d], check=True, capture_output=True)  # git apply stays in this folder
            if base_text is not None:
                target.write_bytes(base_text.encode())
            proc = subprocess.run(command, input=diff.encode(), cwd=d, capture_output=True, timeout=60)
            if proc.returncode != 0:
                out[tool] = (False, (proc.stdout + proc.stderr).decode(errors="replace").strip())
            else:
                out[tool] = (True, target.read_bytes().decode(errors="replace") if target.exists() else "")
    return out
