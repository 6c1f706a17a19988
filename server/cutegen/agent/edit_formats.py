"""Every edit format models write, read into one representation: hunks for the tolerant matcher.

  diff            a unified diff (```diff), headers and counts often wrong (patch.py repairs them)
  search-replace  `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks (aider's format)
  json            CuTeGen's line edits: [{"action": "replace"|"insert"|"delete", "line_number": N,
                  "num_lines": K, "new_code": "..." | [lines]}], 1-based lines of the text the model
                  was shown, applied bottom-up; an optional "old_code" anchors an edit by content
  whole           the whole file in one code block

Each becomes a list of (stated 0-based line or None, [HunkLine]) placed by placement.py, so one
matcher decides for all formats: content re-anchors moved lines, ambiguity and absence refuse.
Before parsing, `<think>` blocks and CRLF are dropped. A refusal carries a class (REFUSALS) and a
message the next round's prompt can quote.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from cutegen.agent.diff_text import PatchRejected, extract_diff, parse_diff
from cutegen.agent.placement import HunkLine

FORMATS = ("diff", "search-replace", "json", "whole")
CHOICES = ("auto",) + FORMATS
REFUSALS = ("truncated", "no-edit", "wrong-format", "mixed-formats", "other-file", "elision", "malformed",
            "line-numbers", "out-of-range", "overlap", "ambiguous", "not-found", "no-change", "rewrite")
JSON_CONTEXT = 3  # lines of the shown text around a JSON edit: what re-anchors it when lines moved

Hunk = tuple[int | None, list[HunkLine]]


class EditRefused(ValueError):
    def __init__(self, kind: str, message: str, raw: str = ""):
        super().__init__(message)
        self.kind, self.message, self.raw = kind, message, raw


@dataclass
class Edits:
    format: str
    hunks: list[Hunk] = field(default_factory=list)
    whole: str | None = None  # the whole new file (format "whole")
    notes: list[str] = field(default_factory=list)
    raw: str = ""
    parts: list["Edits"] = field(default_factory=list)  # a reply in several formats: each one's edits


def parse(reply: str, name: str, original: str, *, fmt: str = "auto", shown: str | None = None,
          finish_reason: str = "") -> Edits:
    """The edits `reply` proposes for `name` (current text `original`; `shown` the text the model saw)."""
    if fmt not in CHOICES:
        raise ValueError(f"unknown edit format {fmt!r}")
    if finish_reason == "length":
        raise EditRefused("truncated", "the reply was cut off at the token limit (cutegen.maxTokens, --max-tokens): "
                                      "nothing was applied")
    text = strip_thinking(reply.replace("\r\n", "\n").replace("\r", "\n"))
    found = detect(text)
    if found is None:
        raise EditRefused("no-edit", "the reply holds no edit: no unified diff (```diff block with ---/+++ headers "
                                     "and @@ hunks), SEARCH/REPLACE block, JSON line edits or whole file")
    if fmt != "auto" and found != fmt:
        raise EditRefused("wrong-format", f"the reply holds {LABELS[found]}, but {LABELS[fmt]} was asked for "
                                          "(setting cutegen.llmEditFormat)", text[:1500])
    original_lines = set(original.replace("\r\n", "\n").split("\n"))
    if found == "whole":
        return _whole(text, name, original, original_lines)
    seen = (shown if shown is not None else original).replace("\r\n", "\n")
    edits = _one_format(found, text, name, seen, original_lines)
    others = _other_formats(text, found)
    return _mixed(edits, others, text, name, seen, original_lines, fmt) if others else edits


def _one_format(fmt: str, text: str, name: str, shown: str, original_lines: set[str]) -> Edits:
    if fmt == "diff":
        edits = _diff(text, name)
    elif fmt == "search-replace":
        edits = _search_replace(text, name)
    else:
        edits = _json(text, name, shown)
    edits.hunks = [_expand_elisions(i, h, original_lines, edits) for i, h in enumerate(edits.hunks, 1)]
    return edits


def _other_formats(text: str, found: str) -> list[str]:
    """The edit formats besides `found` the reply also holds, by marks no prose has: SEARCH/REPLACE
    markers, a JSON list of edits with "action", a diff with an @@ hunk (a whole file is never one)."""

    present = []
    if found != "search-replace" and _SR_START.search(text):
        present.append("search-replace")
    if found != "json" and (any('"action"' in m.group("body") for m in _FENCE.finditer(text)
                                if m.group("lang").lower() == "json") or _bare_json(text) is not None):
        present.append("json")
    if found != "diff":
        diff, _, _ = extract_diff(text)
        if diff and re.search(r"^@@", diff, re.M):
            present.append("diff")
    return present


def _mixed(edits: Edits, others: list[str], text: str, name: str, shown: str, original_lines: set[str],
           fmt: str) -> Edits:
    """A reply in several formats: every part is read (patch.py applies them together only when they
    agree); a part that cannot be read refuses the whole reply, since dropping it would drop an edit."""
    both = " and ".join(LABELS[f] for f in [edits.format, *others])
    if fmt != "auto":
        raise EditRefused("mixed-formats", f"the reply holds {both}, but only {LABELS[fmt]} was asked for "
                                           "(setting cutegen.llmEditFormat): nothing was applied", text[:1500])
    parts = [edits]
    for other in others:
        try:
            parts.append(_one_format(other, text, name, shown, original_lines))
        except EditRefused as e:
            raise EditRefused("mixed-formats", f"the reply holds {both}, and {the(other)} cannot be used "
                                               f"({e.message}): nothing was applied", e.raw) from None
    return Edits("+".join(p.format for p in parts), notes=[n for p in parts for n in p.notes],
                 raw="\n".join(p.raw for p in parts), parts=parts)


LABELS = {"diff": "a unified diff", "search-replace": "SEARCH/REPLACE blocks", "json": "JSON line edits",
          "whole": "a whole file", "auto": "any edit format"}


def the(fmt: str) -> str:
    """'the unified diff', 'the SEARCH/REPLACE blocks': a format named in a sentence."""
    return "the " + LABELS[fmt].removeprefix("a ")


# -- common -------------------------------------------------------------------------------------

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)


def strip_thinking(text: str) -> str:
    """The reply without its reasoning: closed <think> blocks, or everything up to a lone `</think>`
    (templates that open the block in the prompt). An unclosed block is a cut-off reply."""
    text = _THINK.sub("", text)
    close = re.search(r"</(think|thinking|reasoning)>", text, re.I)
    if close:
        text = text[close.end():]
    if re.search(r"<(think|thinking|reasoning)>", text, re.I):
        raise EditRefused("truncated", "the reply ends inside its <think> block: it was cut off before the answer")
    return text


_SR_START = re.compile(r"^<{5,9} ?SEARCH\b", re.M)
_JSON_FENCE = re.compile(r"^(```+|~~~+)[ \t]*json[^\n]*\n", re.M | re.I)


def detect(text: str) -> str | None:
    """The format the reply is written in (the first that is present, most specific first)."""

    if _SR_START.search(text):
        return "search-replace"
    if _JSON_FENCE.search(text) or _bare_json(text) is not None:
        return "json"
    diff, truncated, _ = extract_diff(text)
    if diff is not None:
        return "diff"
    if truncated:
        raise EditRefused("truncated", "the reply ends inside an unclosed code block: it was cut off")
    if _code_blocks(text):
        return "whole"
    return None


_FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                    re.M | re.S)
_CODE_LANGS = {"", "cuda", "cu", "cpp", "c++", "cxx", "c", "cuh", "hpp"}
_COMMENT = re.compile(r"^(//+|/\*+|#)\s*(?P<body>.*?)\s*(\*+/)?$")
_ELIDED_WORDS = re.compile(r"\b(unchanged|existing code|rest of (the )?(file|code|function|kernel)|"
                           r"remains? the same|as before|same as before)\b", re.I)


def is_elision(line: str) -> bool:
    """A line that stands for code the model left out: `// ... existing code ...`, `...`,
    `/* rest of the kernel unchanged */`. Real code (`f(...)`) is never a comment-only line."""
    s = line.strip()
    if s in ("...", "…"):
        return True
    m = _COMMENT.match(s)
    if not m or len(m.group("body")) > 80:
        return False
    body = m.group("body")
    return body.startswith(("...", "…")) or body.endswith(("...", "…")) or bool(_ELIDED_WORDS.search(body))


def _code_blocks(text: str) -> list[str]:
    return [m.group("body") for m in _FENCE.finditer(text) if m.group("lang").lower() in _CODE_LANGS]


def _unclosed_fence(text: str) -> bool:
    blocks = list(_FENCE.finditer(text))
    tail = text[blocks[-1].end():] if blocks else text
    return re.search(r"^(```+|~~~+)", tail, re.M) is not None


_NAMED = re.compile(r"^[\s*`#>]*(?:file:?\s*)?([\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|py))[\s*`:]*$", re.I)


def _check_named(text_before: str, name: str, raw: str) -> None:
    """A file name on the last non-blank line before a block (aider's convention) must be ours."""
    prior = [line for line in text_before.split("\n") if line.strip()]
    prior = [line for line in prior if not re.match(r"^\s*(```+|~~~+)", line)]
    m = _NAMED.match(prior[-1]) if prior else None
    if m and PurePosixPath(m.group(1)).name != name:
        raise EditRefused("other-file", f"the edit is for {m.group(1)}; only {name} may change", raw)


def _expand_elisions(i: int, hunk: Hunk, original_lines: set[str], edits: Edits) -> Hunk:
    """An elision marker kept on both sides is code left out: drop it and let the gapped rule keep
    the file's lines there. One that would be written into the file, or removed from it, cannot be
    expanded: refuse."""
    stated, lines = hunk
    out = []
    for h in lines:
        if h.text not in original_lines and is_elision(h.text):
            if h.kind != " ":
                raise EditRefused("elision", f"edit {i} would {'write' if h.kind == '+' else 'remove'} the elision "
                                             f"{h.text.strip()!r}: send the code itself, not a placeholder", edits.raw)
            edits.notes.append(f"edit {i}: the elision {h.text.strip()!r} stands for the file's own lines")
            continue
        out.append(h)
    return stated, out


# -- unified diff -------------------------------------------------------------------------------

def _diff(text: str, name: str) -> Edits:

    diff, truncated, fenced = extract_diff(text)
    if truncated:
        raise EditRefused("truncated", "the reply ends inside an unclosed code block: it was cut off", diff or "")
    if diff is None:  # never: this format is read only when detect() or _other_formats() found a diff
        raise EditRefused("no-edit", "the reply holds no unified diff")
    try:
        hunks, notes = parse_diff(diff, name, fenced)
    except PatchRejected as e:
        raise EditRefused(e.kind, str(e), diff) from None
    return Edits("diff", hunks, notes=notes, raw=diff)


# -- SEARCH/REPLACE -----------------------------------------------------------------------------

_SR_BLOCK = re.compile(r"^<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^={5,9}[ \t]*\n(?P<replace>.*?)^>{5,9} ?REPLACE[^\n]*$",
                       re.M | re.S)


def _search_replace(text: str, name: str) -> Edits:
    blocks = list(_SR_BLOCK.finditer(text))
    raw = "\n".join(m.group(0) for m in blocks)
    if len(blocks) < len(_SR_START.findall(text)):
        raise EditRefused("truncated", "a SEARCH block has no `>>>>>>> REPLACE` end: the reply was cut off",
                          text[-1500:])
    edits = Edits("search-replace", raw=raw)
    for i, m in enumerate(blocks, 1):
        _check_named(text[:m.start()], name, raw)
        search, replace = _lines(m.group("search")), _lines(m.group("replace"))
        if not any(s.strip() for s in search):
            raise EditRefused("ambiguous", f"edit {i} has an empty SEARCH part, which says nowhere where its "
                                           "lines go: quote the lines to change", raw)
        edits.hunks.append((None, _hunk(search, replace)))
    return edits


def _lines(body: str) -> list[str]:
    return body[:-1].split("\n") if body.endswith("\n") else body.split("\n") if body else []


def _hunk(old: list[str], new: list[str]) -> list[HunkLine]:
    """Old and new lines as one hunk: lines both keep are context (which lets the matcher fuzz and
    gap around them), the rest removals then additions."""
    out: list[HunkLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [HunkLine(" ", t) for t in old[i1:i2]]
            continue
        out += [HunkLine("-", t) for t in old[i1:i2]] + [HunkLine("+", t) for t in new[j1:j2]]
    return out


# -- JSON line edits ----------------------------------------------------------------------------

def _bare_json(text: str):
    """A reply that is JSON line edits without a fence (prose around it allowed), else None."""
    for opener, closer in (("[", "]"), ("{", "}")):
        start, end = text.find(opener), text.rfind(closer)
        if start < 0 or end < start or '"action"' not in text[start:end + 1]:
            continue
        try:
            return json.loads(text[start:end + 1])
        except (ValueError, RecursionError):
            continue
    return None


def _json_payload(text: str):
    fences = [m for m in _FENCE.finditer(text) if m.group("lang").lower() == "json"]
    if not fences:
        if _JSON_FENCE.search(text):
            raise EditRefused("truncated", "the reply ends inside its ```json block: it was cut off", text[-1500:])
        return _bare_json(text), text
    items, raw = [], "\n".join(m.group("body") for m in fences)
    for m in fences:
        try:
            data = json.loads(m.group("body"))
        except (ValueError, RecursionError) as e:
            body = m.group("body")
            kind = "truncated" if body.count("[") + body.count("{") > body.count("]") + body.count("}") else "malformed"
            raise EditRefused(kind, f"the JSON edits cannot be read ({_json_problem(e)})", raw) from None
        items += data if isinstance(data, list) else [data]
    return items, raw


def _json_problem(e: ValueError | RecursionError) -> str:
    """Why json.loads refused the text: a syntax error and where; else, in Python's words, a number too long
    for an int (over 4300 digits: a plain ValueError) or nesting too deep (RecursionError)."""
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at line {e.lineno}"
    return str(e).split(";")[0]  # without the advice to call sys.set_int_max_str_digits


def _json(text: str, name: str, shown: str) -> Edits:
    data, raw = _json_payload(text)
    if isinstance(data, dict):
        data = next((data[k] for k in ("edits", "changes", "patches", "patch") if isinstance(data.get(k), list)),
                    [data])
    if not isinstance(data, list) or not data:
        raise EditRefused("malformed", "the JSON holds no list of edits", raw)
    lines = shown.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    edits = Edits("json", raw=raw)
    # Every line number is one of the shown text, so the edits are independent: applied bottom-up, none
    # moves another. At one line an insert goes before what a replace or delete there does (it is "before
    # line N", the other covers line N, whatever their listed order); inserts at one line keep their order.
    # Sorting by (start, end, listed order) gives exactly that order; an insert inside a replaced span has
    # no place and is refused.
    spans = sorted((_json_edit(i, e, lines, name, raw), i) for i, e in enumerate(data, 1))
    for (a, i), (b, j) in zip(spans, spans[1:]):
        if b.start < a.end:
            raise EditRefused("overlap", f"JSON edits {i} and {j} touch the same lines", raw)
    group: list[_Span] = []
    for span, _ in spans:
        if span.old is not None:  # anchored by its own quoted content
            edits.hunks.append((span.start, _hunk(span.old, span.new)))
        elif group and span.start - group[-1].end <= 2 * JSON_CONTEXT:
            group.append(span)
        else:
            if group:
                edits.hunks.append(_numbered_hunk(group, lines))
            group = [span]
    if group:
        edits.hunks.append(_numbered_hunk(group, lines))
    return edits


@dataclass(order=True)
class _Span:
    start: int  # 0-based first shown line replaced (or the insertion point)
    end: int  # one past the last replaced line (== start for an insert)
    new: list[str] = field(compare=False)
    old: list[str] | None = field(default=None, compare=False)  # quoted old code, if the edit gave it


def _numbered_hunk(group: list["_Span"], lines: list[str]) -> Hunk:
    """Edits close together, as one hunk: the shown lines around and between them are context,
    which is what re-anchors the edits when the file has moved since the model saw it."""
    first = max(0, group[0].start - JSON_CONTEXT)
    body = [HunkLine(" ", t) for t in lines[first:group[0].start]]
    for k, s in enumerate(group):
        if k:
            body += [HunkLine(" ", t) for t in lines[group[k - 1].end:s.start]]
        body += [HunkLine("-", t) for t in lines[s.start:s.end]] + [HunkLine("+", t) for t in s.new]
    body += [HunkLine(" ", t) for t in lines[group[-1].end:group[-1].end + JSON_CONTEXT]]
    return first, body


def _json_edit(i: int, e, lines: list[str], name: str, raw: str) -> _Span:
    if not isinstance(e, dict):
        raise EditRefused("malformed", f"JSON edit {i} is not an object", raw)
    path = e.get("file") or e.get("path") or e.get("filename")
    if isinstance(path, str) and PurePosixPath(path).name != name:
        raise EditRefused("other-file", f"JSON edit {i} is for {path}; only {name} may change", raw)
    action = str(e.get("action", "")).lower()
    if action not in ("replace", "insert", "delete"):
        raise EditRefused("malformed", f"JSON edit {i} has action {action!r} (replace, insert or delete)", raw)
    try:
        n = int(e["line_number"])
        k = 0 if action == "insert" else int(e.get("num_lines", 1))
    except (KeyError, TypeError, ValueError):
        raise EditRefused("malformed", f"JSON edit {i} needs an integer line_number (and num_lines)", raw) from None
    if action != "delete" and "new_code" not in e:
        raise EditRefused("malformed", f"JSON edit {i} ({action}) has no new_code", raw)
    new = [] if action == "delete" else _code_lines(e["new_code"])
    if any(x.strip() for x in new) and all(re.match(r"^\s*\d+\s*[|:] ", x) for x in new if x.strip()):
        raise EditRefused("line-numbers", f"JSON edit {i} copies the shown line numbers into its code", raw)
    if n < 1 or n - 1 + k > len(lines) or (action == "insert" and n > len(lines) + 1) or (action != "insert" and k < 1):
        raise EditRefused("out-of-range", f"JSON edit {i} ({action} at line {n}, {k} lines) is outside the "
                                          f"{len(lines)} lines of the file", raw)
    old = e.get("old_code") or e.get("original_code")
    if old:  # the model quoted what it replaces: that content anchors it, the number only breaks ties
        old_lines = _code_lines(old)
        return _Span(n - 1, n - 1 + len(old_lines), new, old_lines)
    return _Span(n - 1, n - 1 + k, new)


def _code_lines(value) -> list[str]:
    """new_code as lines, read as CuTeGen's own applier reads it: a string's lines (a blank line inside it
    stays), a list's entries' lines (an entry "" is no line, "a\\nb" two), null or "" no line at all."""
    if value is None:
        return []
    if isinstance(value, list):
        return [line for x in value if x is not None for line in _lines(str(x).replace("\r\n", "\n"))]
    return _lines(str(value).replace("\r\n", "\n"))


# -- whole file ---------------------------------------------------------------------------------

def _whole(text: str, name: str, original: str, original_lines: set[str]) -> Edits:
    if _unclosed_fence(text):
        raise EditRefused("truncated", "the reply ends inside an unclosed code block: it was cut off")
    n = len(original.splitlines())
    blocks = [b for b in _code_blocks(text) if len(b.splitlines()) >= 0.5 * n]
    if not blocks:
        raise EditRefused("no-edit", "the reply's code is a snippet, not the file, and no diff, SEARCH/REPLACE "
                                     "block or JSON edit says where it goes: no unified diff")
    if len(blocks) > 1:
        raise EditRefused("ambiguous", f"the reply holds {len(blocks)} versions of the whole file")
    code = blocks[0]
    m = next(m for m in _FENCE.finditer(text) if m.group("body") == code)
    _check_named(text[:m.start()], name, code)
    elided = [line for line in code.split("\n") if line not in original_lines and is_elision(line)]
    if elided:
        raise EditRefused("elision", f"the whole file elides code ({elided[0].strip()!r}): taking it would delete "
                                     "what it leaves out; send an edit instead", code)
    return Edits("whole", whole=code, notes=["the reply gave the whole file; its changes were taken as the diff"],
                 raw=code)
