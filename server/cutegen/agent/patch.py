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

from cutegen.agent.diff_text import PatchRejected, parse_diff
from cutegen.agent.edit_formats import LABELS, EditRefused, parse, the
from cutegen.agent.placement import HunkLine, PlaceError, place

REWRITE_LINES = 24  # a patch removing more lines than this ...
REWRITE_SHARE = 0.6  # ... and more than this share of the file is a rewrite, not a local fix



@dataclass
class Patch:
    ok: bool
    new_text: str | None = None  # the patched file: set exactly when ok
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
    both = " and ".join(LABELS[p.format] for p in edits.parts)
    results = []
    for part in edits.parts:
        p = apply_hunks(part.hunks, list(part.notes), original, name, raw=part.raw, local=False)
        if not p.ok and p.kind != "no-change":
            return Patch(False, raw=edits.raw, notes=edits.notes, kind="mixed-formats",
                         error=f"the reply holds {both}; {the(part.format)} cannot be applied ({p.error}): "
                               "nothing was applied")
        results.append((part.format, p.new_text if p.new_text is not None else original))  # None: it changes nothing
    merged = results[0][1]
    for fmt, text in results[1:]:
        combined = merge_changes(original, merged, text)
        if combined is None:
            return Patch(False, raw=edits.raw, notes=edits.notes, kind="mixed-formats",
                         error=f"{the(results[0][0])} and {the(fmt)} of the reply change the same lines differently: "
                               "send one edit in one format; nothing was applied")
        merged = combined
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
        hunks, notes = parse_diff(diff, name, complete)
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
