"""Where a hunk goes in the file: the careful part of the patch matcher.

LLM hunks carry wrong line numbers, re-indented or missing context lines and, now and then, one
invented context line. A hunk is placed by trying stricter rules first:

  1. exact text at the stated line;
  2. exact text elsewhere, if it occurs once (or once within NEAR lines of the stated line);
  3. the same with whitespace normalized, then with `//` comments ignored (a paraphrased comment);
  4. the same with up to two context lines trimmed from either end (GNU patch's "fuzz");
  5. in order with gaps: context lines the LLM left out are kept (never inside a run of removals);
  6. rules 2-5 without one inner context line that is not in the file (an invented line).

Whatever matches more than one place, at the same rule, is rejected: a patch is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

NEAR = 3  # lines: a duplicate match this close to the stated line wins over farther ones
MAX_GAP = 12  # lines a gapped match may skip between two hunk lines
MAX_TRIM = 2  # context lines trimmed from each end at rule 4


@dataclass
class HunkLine:
    kind: str  # " ", "-", "+"
    text: str  # without the marker and without a line ending


@dataclass
class Placement:
    start: int  # first file line replaced (0-based)
    end: int  # one past the last
    new: list[str]  # replacement lines, without line endings
    rule: str  # which rule placed it (for notes)


class PlaceError(ValueError):
    pass


def _norm(s: str) -> str:
    return " ".join(s.split())


def _code(s: str) -> str:
    """The line without its `//` comment (whole-line comments stay: they are all there is)."""
    code = s.split("//", 1)[0]
    return _norm(code) if code.strip() else _norm(s)


def place(lines: list[str], hunk: list[HunkLine], stated: int | None) -> Placement:
    """Place one hunk in `lines` (file lines without endings); `stated` is the 0-based line the
    hunk header claims, or None when the header had no numbers."""
    old = [h for h in hunk if h.kind != "+"]
    if not old:
        raise PlaceError("it only adds lines and has no context line to say where")
    if not any(h.kind == "-" for h in hunk) and all(not _norm(h.text) for h in old):
        raise PlaceError("its only context is blank lines, which match too many places")
    try:
        return _place(lines, hunk, stated)
    except PlaceError as first:
        if "occur" in str(first):
            raise  # ambiguous already: dropping lines only makes it more so
        present = {_code(line) for line in lines}
        inner = [i for i, h in enumerate(hunk) if h.kind == " " and 0 < i < len(hunk) - 1
                 and _code(h.text) not in present and _norm(h.text)]
        if len(inner) != 1:
            raise
        i = inner[0]
        p = _place(lines, hunk[:i] + hunk[i + 1:], stated)
        p.rule += f"; its context line {hunk[i].text.strip()!r} is not in the file and was ignored"
        return p


def _place(lines: list[str], hunk: list[HunkLine], stated: int | None) -> Placement:
    for rule, key in (("exact", str.rstrip), ("whitespace", _norm), ("comments ignored", _code)):
        found = _contiguous(lines, hunk, key, stated, rule)
        if found:
            return found
    for trim in range(1, MAX_TRIM + 1):
        for lead, tail in ((trim, 0), (0, trim), (trim, trim)):
            core = _trim(hunk, lead, tail)
            if core is None:
                continue
            shift = None if stated is None else stated + lead  # trimmed leading lines are context
            found = _contiguous(lines, core, _norm, shift, f"fuzz {lead}/{tail}")
            if found:
                return found
    return _gapped(lines, hunk, stated)


def _trim(hunk: list[HunkLine], lead: int, tail: int) -> list[HunkLine] | None:
    """The hunk without `lead`/`tail` context lines at its ends; None if those are not all context
    or nothing would anchor the rest."""
    if lead + tail >= len(hunk):
        return None
    head, body, end = hunk[:lead], hunk[lead:len(hunk) - tail], hunk[len(hunk) - tail:]
    if any(h.kind != " " for h in head + end):
        return None
    if not any(h.kind == "-" for h in body) and not any(h.kind == " " and _norm(h.text) for h in body):
        return None
    if not any(h.kind != "+" for h in body):
        return None
    return body


def _contiguous(lines, hunk, key, stated, rule) -> Placement | None:
    old = [key(h.text) for h in hunk if h.kind != "+"]
    keyed = [key(line) for line in lines]
    n = len(old)
    hits = [i for i in range(len(lines) - n + 1) if keyed[i:i + n] == old]
    start = _choose(hits, stated, rule)
    if start is None:
        return None
    return _build(lines, hunk, list(range(start, start + n)), rule if start == stated or stated is None
                  else f"{rule}, {start - stated:+d} lines from the stated line")


def _choose(hits: list[int], stated: int | None, rule: str) -> int | None:
    if not hits:
        return None
    if stated is not None and stated in hits:
        return stated
    if len(hits) == 1:
        return hits[0]
    if stated is not None:
        near = [h for h in hits if abs(h - stated) <= NEAR]
        if len(near) == 1:
            return near[0]
    raise PlaceError(f"its lines occur {len(hits)} times in the file ({rule} match, at lines "
                     f"{', '.join(str(h + 1) for h in hits[:5])}) and the stated line does not say which")


def _gapped(lines: list[str], hunk: list[HunkLine], stated: int | None) -> Placement:
    """Rule 5: hunk lines in order, skipping up to MAX_GAP file lines before a line whose
    predecessor in the hunk is not a removal (a run of removals stays contiguous)."""
    old = [h for h in hunk if h.kind != "+"]
    keyed = [_norm(line) for line in lines]
    want = [_norm(h.text) for h in old]
    found: list[list[int]] = []
    for s in range(len(lines)):
        if keyed[s] != want[0]:
            continue
        match, pos = [s], s + 1
        for k in range(1, len(old)):
            gap_ok = old[k - 1].kind != "-" or old[k].kind != "-"
            limit = min(len(lines), pos + (MAX_GAP + 1 if gap_ok else 1))
            nxt = next((j for j in range(pos, limit) if keyed[j] == want[k]), None)
            if nxt is None:
                break
            match.append(nxt)
            pos = nxt + 1
        else:
            found.append(match)
    if not found:
        first = _first_missing(keyed, want)
        raise PlaceError(f"its line {first!r} is not in the file" if first else "its lines are not in the file in this order")
    # Several alignments with one start are the same place (greedy picks one of them).
    starts = sorted({m[0] for m in found})
    start = _choose(starts, stated, "gapped")
    match = next(m for m in found if m[0] == start)
    skipped = (match[-1] - match[0] + 1) - len(match)
    return _build(lines, hunk, match, f"gapped ({skipped} context line{'s' * (skipped != 1)} the diff left out kept)")


def _first_missing(keyed: list[str], want: list[str]) -> str | None:
    present = set(keyed)
    return next((w for w in want if w not in present), None)


def _build(lines: list[str], hunk: list[HunkLine], match: list[int], rule: str) -> Placement:
    """The replacement for lines[match[0]:match[-1]+1]: the file's own text for context and for
    lines the diff skipped, the diff's text for additions."""
    out: list[str] = []
    it = iter(match)
    cursor = match[0]
    for h in hunk:
        if h.kind == "+":
            out.append(h.text)
            continue
        j = next(it)
        out.extend(lines[cursor:j])  # lines the diff left out
        if h.kind == " ":
            out.append(lines[j])  # the user's text, with the user's whitespace
        cursor = j + 1
    return Placement(match[0], cursor, out, rule)
