"""From an LLM reply to a new file text: extract the diff, repair it, parse it with `unidiff`,
check that it touches only the one file, place its hunks (placement.py) and check it is local.

What LLMs really emit is tolerated: fenced or bare diffs with prose around them, CRLF, wrong hunk
counts and line numbers, headers with made-up directories, blank context lines without their
space, missing or re-indented context lines, several fenced blocks, or the whole file instead of
a diff. What cannot be placed unambiguously, a cut-off reply, a new/deleted/other file, or a
rewrite is rejected with a reason the next round's prompt can quote.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from cutegen.agent.placement import HunkLine, PlaceError, place

REWRITE_LINES = 24  # a patch removing more lines than this ...
REWRITE_SHARE = 0.6  # ... and more than this share of the file is a rewrite, not a local fix

_FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_OPEN_FENCE = re.compile(r"^(```+|~~~+)", re.M)
_NUMBERS = re.compile(r"-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?")
_DIFF_START = re.compile(r"^(diff --git |--- |\+\+\+ |@@)", re.M)
_CODE_LANGS = {"", "cuda", "cu", "cpp", "c++", "cxx", "c", "cuh", "hpp"}


@dataclass
class Patch:
    ok: bool
    new_text: str | None = None
    diff: str = ""  # canonical unified diff of the result (difflib), what is shown and stored
    notes: list[str] = field(default_factory=list)  # tolerances used, for the transcript
    error: str | None = None  # why it was rejected, plainly
    kind: str = ""  # the class of the refusal (edit_formats.REFUSALS), for tables and tests
    raw: str = ""  # the diff text as extracted from the reply
    added: int = 0
    removed: int = 0


def apply_reply(reply: str, original: str, name: str, *, finish_reason: str = "", whole_file_ok: bool = True,
                local: bool = True, fmt: str = "auto", shown: str | None = None) -> Patch:
    """The patch an LLM reply proposes for the file `name` whose text is `original`, in the edit
    format `fmt` (edit_formats.FORMATS, or "auto" for any). `shown` is the text the model saw when
    it differs from `original` (line-numbered JSON edits are read against it, then re-anchored)."""
    from cutegen.agent.edit_formats import EditRefused, parse

    try:
        edits = parse(reply, name, original, fmt=fmt, shown=shown, finish_reason=finish_reason)
    except EditRefused as e:
        return Patch(False, raw=e.raw, error=e.message, kind=e.kind)
    if edits.parts:
        return _apply_parts(edits, original, name, local)
    if edits.whole is not None:
        if not whole_file_ok:
            return Patch(False, raw=edits.raw, kind="wrong-format",
                         error="the reply gave a whole file where a localized edit was asked for")
        return finish(original, _endings_of(original, edits.whole), name, edits.notes, raw=edits.raw, local=local)
    return apply_hunks(edits.hunks, edits.notes, original, name, raw=edits.raw, local=local)


def _apply_parts(edits, original: str, name: str, local: bool) -> Patch:
    """A reply in several formats: each part placed on its own, then applied together only when they
    agree (the same change, or changes to different lines); else refused naming both. No edit is dropped."""
    from cutegen.agent.edit_formats import LABELS, the

    both = " and ".join(LABELS[p.format] for p in edits.parts)
    results = []
    for part in edits.parts:
        p = apply_hunks(part.hunks, list(part.notes), original, name, raw=part.raw, local=False)
        if not p.ok and p.kind != "no-change":
            return Patch(False, raw=edits.raw, notes=edits.notes, kind="mixed-formats",
                         error=f"the reply holds {both}; {the(part.format)} cannot be applied ({p.error}): "
                               "nothing was applied")
        results.append((part.format, p.new_text if p.ok else original))
    merged = results[0][1]
    for fmt, text in results[1:]:
        merged = merge_changes(original, merged, text)
        if merged is None:
            return Patch(False, raw=edits.raw, notes=edits.notes, kind="mixed-formats",
                         error=f"{the(results[0][0])} and {the(fmt)} of the reply change the same lines differently: "
                               "send one edit in one format; nothing was applied")
    same = all(text == results[0][1] for _, text in results)
    note = (f"the reply holds {both}: " + ("the same change, applied once" if same else
                                           "they change different lines, both applied"))
    return finish(original, merged, name, [*edits.notes, note], raw=edits.raw, local=local)


def merge_changes(base: str, a: str, b: str) -> str | None:
    """`base` with the changes of both `a` and `b` (each a changed copy of it), or None when they change
    the same lines differently (or insert at the point where the other changes something)."""
    lines = _with_ends(base)
    regions = sorted(set(_changes(lines, _with_ends(a))) | set(_changes(lines, _with_ends(b))))
    for k, x in enumerate(regions):
        for y in regions[k + 1:]:  # y starts at or after x (sorted); identical changes are one region
            if y[0] < x[1] or (y[0] == x[0] and (x[0] == x[1] or y[0] == y[1])):
                return None
    out, cursor = [], 0
    for i1, i2, new in regions:
        out += lines[cursor:i1] + list(new)
        cursor = i2
    return "".join(out + lines[cursor:])


def _changes(base: list[str], other: list[str]) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first base line replaced, one past the last, the lines put there) for every change `other` makes."""
    ops = difflib.SequenceMatcher(None, base, other, autojunk=False).get_opcodes()
    return [(i1, i2, tuple(other[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _endings_of(original: str, text: str) -> str:
    """`text` (a whole file from a reply) with the line endings and final newline of `original`: the model
    never sees either, so they stay the user's."""
    eol = "\r\n" if original.count("\r\n") > original.count("\n") / 2 else "\n"
    body = text.replace("\r\n", "\n")
    body = body[:-1] if body.endswith("\n") else body
    ends = original.endswith("\n") or not original
    return body.replace("\n", eol) + (eol if ends else "")


def apply_diff(diff: str, original: str, name: str, *, local: bool = True, complete: bool = True) -> Patch:
    """Apply unified-diff text to `original` (also used to re-base a verified patch on new edits)."""
    try:
        hunks, notes = _parse(diff, name, complete)
    except PatchRejected as e:
        return Patch(False, raw=diff, error=str(e), kind=e.kind)
    return apply_hunks(hunks, notes, original, name, raw=diff, local=local)


def apply_hunks(hunks: list[tuple[int | None, list[HunkLine]]], notes: list[str], original: str, name: str, *,
                raw: str = "", local: bool = True) -> Patch:
    """Place every hunk (stated 0-based line or None, lines) in `original`; all or nothing."""
    eol = "\r\n" if original.count("\r\n") > original.count("\n") / 2 else "\n"
    lines = original.replace("\r\n", "\n").split("\n")
    trailing = lines[-1] == ""
    if trailing:
        lines.pop()
    placed = []
    for i, (stated, body) in enumerate(hunks, 1):
        try:
            p = place(lines, body, stated)
        except PlaceError as e:
            kind = "ambiguous" if any(w in str(e) for w in ("occur", "no context", "blank lines")) else "not-found"
            return Patch(False, raw=raw, notes=notes, error=f"hunk {i} cannot be placed: {e}", kind=kind)
        if p.rule != "exact":
            notes.append(f"hunk {i}: {p.rule}")
        placed.append((i, p))
    placed.sort(key=lambda ip: ip[1].start)
    for (i, a), (j, b) in zip(placed, placed[1:]):
        if b.start < a.end:
            return Patch(False, raw=raw, notes=notes, error=f"hunks {i} and {j} overlap in the file", kind="overlap")
    out = list(lines)
    for _, p in reversed(placed):
        out[p.start:p.end] = p.new
    new_text = eol.join(out) + (eol if trailing or not out else "")
    return finish(original, new_text, name, notes, raw=raw, local=local)


def finish(original: str, new_text: str, name: str, notes: list[str], *, raw: str = "", local: bool = True) -> Patch:
    """The canonical diff, the size check and the result."""
    a, b = original.splitlines(), new_text.splitlines()
    if a == b:
        return Patch(False, raw=raw, notes=notes, error="the patch changes nothing", kind="no-change")
    if not new_text.strip():
        return Patch(False, raw=raw, notes=notes, error="the patch empties the file", kind="rewrite")
    removed = added = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        removed += i2 - i1 if tag != "equal" else 0
        added += j2 - j1 if tag != "equal" else 0
    if local and removed > REWRITE_LINES and removed > REWRITE_SHARE * max(len(a), 1):
        return Patch(False, raw=raw, notes=notes, removed=removed, added=added, kind="rewrite",
                     error=f"the patch replaces {removed} of {len(a)} lines: a rewrite, not a localized change "
                           "(send small hunks that change only what must change)")
    return Patch(True, new_text=new_text, diff=unified(original, new_text, name), notes=notes, raw=raw,
                 added=added, removed=removed)


def unified(before: str, after: str, name: str) -> str:
    """The diff CuTeGen prints and stores, exact for `patch -p1` and `git apply`: every line keeps its own
    ending (CRLF lines stay CRLF), a last line without one is marked `\\ No newline at end of file`, and an
    empty `before` is a new file (`--- /dev/null`)."""
    a, b = _with_ends(before), _with_ends(after)
    out = [f"--- {'/dev/null' if not before else 'a/' + name}\n", f"+++ b/{name}\n"]
    for line in list(difflib.unified_diff(a, b, lineterm="\n"))[2:]:  # difflib's own header has no names
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out) if len(out) > 2 else ""


def _with_ends(text: str) -> list[str]:
    """The lines of `text`, each with its line ending (the last one may have none)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


class PatchRejected(ValueError):
    def __init__(self, message: str, kind: str = "malformed"):
        super().__init__(message)
        self.kind = kind


# -- extraction ---------------------------------------------------------------------------------

def _extract_diff(text: str) -> tuple[str | None, bool, bool]:
    """(diff text, truncated, fenced). Fenced diff blocks win (all of them, in order); else a bare diff."""
    blocks = [m for m in _FENCE.finditer(text)]
    inside = [(m.group("lang").lower(), m.group("body")) for m in blocks]
    diffs = [body for lang, body in inside if lang in ("diff", "patch", "udiff") or _looks_like_diff(body)]
    closed_end = blocks[-1].end() if blocks else 0
    unclosed = _OPEN_FENCE.search(text, closed_end) is not None
    if diffs:
        return "".join(d if d.endswith("\n") else d + "\n" for d in diffs), unclosed, True
    if unclosed:
        tail = text[_OPEN_FENCE.search(text, closed_end).end():]
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

def _parse(diff: str, name: str, complete: bool) -> tuple[list[tuple[int | None, list[HunkLine]]], list[str]]:
    """Hunks as (stated 0-based start or None, lines), after repairing counts and checking files."""
    import unidiff

    repaired, stated, notes = _repair(diff, name, complete)
    try:
        patch = unidiff.PatchSet(repaired)
    except unidiff.UnidiffParseError as e:
        raise PatchRejected(f"the diff cannot be parsed: {e}") from None
    if not patch or not any(len(f) for f in patch):
        raise PatchRejected("the diff has no hunks")
    hunks = []
    for f in patch:
        _check_file(f, name)
        for h in f:
            body = [HunkLine(" " if l.is_context else ("-" if l.is_removed else "+"), l.value.rstrip("\n"))
                    for l in h if l.line_type in (" ", "-", "+")]
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
            last = not any(l.startswith("@@") for l in lines[i:])
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
