"""A unified diff read out of an LLM reply: where it is (fenced or bare, several blocks, cut off), repaired
(counts recounted from the bodies, headerless hunks given a header, prose between hunks skipped) and parsed with
`unidiff` into hunks that touch only the one file. Shared by `patch.py` (applying) and `edit_formats.py`
(telling the formats apart), which both import it and not each other.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from cutegen.agent.placement import HunkLine

_FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                    re.M | re.S)
_OPEN_FENCE = re.compile(r"^(```+|~~~+)", re.M)
_NUMBERS = re.compile(r"-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?")
_DIFF_START = re.compile(r"^(diff --git |--- |\+\+\+ |@@)", re.M)
_CODE_LANGS = {"", "cuda", "cu", "cpp", "c++", "cxx", "c", "cuh", "hpp"}


class PatchRejected(ValueError):
    def __init__(self, message: str, kind: str = "malformed"):
        super().__init__(message)
        self.kind = kind


# -- extraction ---------------------------------------------------------------------------------

def extract_diff(text: str) -> tuple[str | None, bool, bool]:
    """(diff text, truncated, fenced). Fenced diff blocks win (all of them, in order); else a bare diff."""
    blocks = [m for m in _FENCE.finditer(text)]
    inside = [(m.group("lang").lower(), m.group("body")) for m in blocks]
    diffs = [body for lang, body in inside if lang in ("diff", "patch", "udiff") or _looks_like_diff(body)]
    closed_end = blocks[-1].end() if blocks else 0
    opened = _OPEN_FENCE.search(text, closed_end)  # a fence after the last closed block: never closed
    if diffs:
        return "".join(d if d.endswith("\n") else d + "\n" for d in diffs), opened is not None, True
    if opened is not None:
        tail = text[opened.end():]
        return (tail if _looks_like_diff(tail) else None), True, False
    m = _DIFF_START.search(text)
    if m is None:
        return None, False, False
    return text[m.start():], False, False


def _looks_like_diff(body: str) -> bool:
    return bool(re.search(r"^@@", body, re.M)) or bool(re.search(r"^--- .*\n\+\+\+ ", body, re.M))


def whole_file(text: str) -> str | None:
    blocks = [m for m in _FENCE.finditer(text) if m.group("lang").lower() in _CODE_LANGS]
    return blocks[0].group("body") if len(blocks) == 1 else None


# -- repair and parse ---------------------------------------------------------------------------

def parse_diff(diff: str, name: str, complete: bool) -> tuple[list[tuple[int | None, list[HunkLine]]], list[str]]:
    """Hunks as (stated 0-based start or None, lines), after repairing counts and checking files."""
    import unidiff

    repaired, stated, notes = _repair(diff, name, complete)
    try:
        patch = unidiff.PatchSet(repaired)
    except unidiff.UnidiffParseError as e:
        raise PatchRejected(f"the diff cannot be parsed: {e}") from None
    if not patch or not any(len(f) for f in patch):
        raise PatchRejected("the diff has no hunks")
    hunks: list[tuple[int | None, list[HunkLine]]] = []
    for f in patch:
        _check_file(f, name)
        for h in f:
            body = [HunkLine(" " if line.is_context else ("-" if line.is_removed else "+"), line.value.rstrip("\n"))
                    for line in h if line.line_type in (" ", "-", "+")]
            hunks.append((stated[len(hunks)], body))
    return hunks, notes


def _check_file(f, name: str) -> None:
    source, target = _clean(f.source_file), _clean(f.target_file)
    if source is None or target is None or f.is_added_file or f.is_removed_file:
        raise PatchRejected(f"the patch creates or deletes a file ({f.path}); only {name} may change", "other-file")
    for p in (source, target):
        if PurePosixPath(p).name != name:
            raise PatchRejected(f"the patch touches {p}; only {name} may change", "other-file")


def _clean(path: str | None) -> str | None:
    if not path or path.strip() == "/dev/null":
        return None
    path = path.strip().split("\t")[0]
    return path[2:] if path[:2] in ("a/", "b/") else path


def _repair(diff: str, name: str, complete: bool) -> tuple[str, list[int | None], list[str]]:
    """Recount every hunk from its body (LLM counts are unreliable), give headerless diffs a header,
    skip prose between hunks. In a diff that may be cut off (bare, not in a closed fence), a last
    hunk shorter than its header announces is rejected."""
    lines = diff.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    stated: list[int | None] = []
    notes: list[str] = []
    i, seen_header = 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith(("diff --git ", "index ", "new file mode", "deleted file mode", "similarity", "rename ")):
            out.append(line)
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            out += [line, lines[i + 1]]
            seen_header = True
            i += 2
            continue
        if not line.startswith("@@"):
            i += 1  # prose between hunks
            continue
        if not seen_header:
            out += [f"--- a/{name}", f"+++ b/{name}"]
            seen_header = True
        m = _NUMBERS.search(line.split("@@")[1] if line.count("@@") >= 2 else line)
        body, i = _hunk_body(lines, i + 1)
        old = sum(1 for b in body if b[:1] in (" ", "-"))
        new = sum(1 for b in body if b[:1] in (" ", "+"))
        n = len(stated) + 1
        if m:
            declared = (int(m.group(2) or 1), int(m.group(4) or 1))
            last = not any(rest.startswith("@@") for rest in lines[i:])
            if last and not complete and (old < declared[0] or new < declared[1]) and old + new < sum(declared):
                raise PatchRejected(f"the diff ends before its last hunk does (its header announces -{declared[0]} "
                                    f"+{declared[1]} lines, the body has -{old} +{new}): it looks cut off", "truncated")
            if declared != (old, new):
                notes.append(f"hunk {n}: header said -{declared[0]} +{declared[1]} lines, body has -{old} +{new}")
            stated.append(max(int(m.group(1)) - 1, 0))
        else:
            notes.append(f"hunk {n}: no line numbers in its header")
            stated.append(None)
        src = stated[-1] + 1 if stated[-1] is not None else 1
        out.append(f"@@ -{src},{old} +{src},{new} @@")
        out += body
    return "\n".join(out) + "\n", stated, notes


def _hunk_body(lines: list[str], i: int) -> tuple[list[str], int]:
    body = []
    while i < len(lines):
        line = lines[i]
        if line.startswith(("@@", "diff --git ")) or (line.startswith("--- ") and _is_header(lines, i)):
            break
        if line.startswith(("+", "-", " ", "\\")):
            body.append(line)
        elif line.strip() == "":
            j = next((k for k in range(i + 1, len(lines)) if lines[k].strip()), len(lines))
            nxt = lines[j] if j < len(lines) else ""
            if not nxt.startswith(("+", "-", " ")) or (nxt.startswith("--- ") and _is_header(lines, j)):
                break  # blank lines before prose, the next hunk or the end: not context
            body.append(" ")  # a blank context line whose space was stripped
        else:
            break  # prose
        i += 1
    return body, i


def _is_header(lines: list[str], i: int) -> bool:
    """A `--- ` line followed by `+++ ` starts a file header (else it is a removed `-- ...` line)."""
    return i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
