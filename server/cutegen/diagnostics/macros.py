"""Errors inside a macro invocation, back at their real line and column.

EDG reports an error in a macro argument (the lambda given to AT_DISPATCH_FLOATING_TYPES, a TORCH_CHECK) at the
invocation's first line, and echoes the whole expansion as one logical line with the caret at a column in
that expansion (1,000-2,700 for a dispatch lambda). The argument's text survives the expansion with its
whitespace collapsed, so the text around the caret finds the place in the source.
"""

from __future__ import annotations

import re

_WINDOWS = (80, 48, 32, 20, 12)
_TOKEN = re.compile(r"\w+|\S")
_SPAN = 400  # lines after the invocation's first line that the argument may cover


def macro_position(source: list[str], line: int, echo: str, col: int | None) -> tuple[int, int] | None:
    """(line, col) in `source` of the caret at `col` of `echo` (EDG's echo of `line`), when the echo is a macro
    expansion and its text around the caret occurs after `line`; None when the echo is the line itself."""
    if col is None or not 0 < line <= len(source) or not echo.strip():
        return None
    if col - 1 >= len(echo):
        return None
    token = _TOKEN.match(echo, col - 1)
    if token is None or source[line - 1][col - 1 :].startswith(token.group(0)):
        return None  # the caret is on the line as written: no macro in between
    text, places = _normalised(source, line)
    caret_text, caret_at = _collapse(echo, col - 1)
    token = _TOKEN.match(caret_text, caret_at)
    end = token.end() if token else caret_at + 1
    for width in _WINDOWS:
        start = max(0, caret_at - width)
        needle = caret_text[start:end]
        found = text.find(needle)
        if found >= 0 and (width == _WINDOWS[-1] or text.find(needle, found + 1) < 0):
            return places[found + caret_at - start]
    for width in _WINDOWS:  # text before the caret rewritten (`__global__` echoes as `__attribute__((global))`)
        needle = caret_text[caret_at : caret_at + width]
        found = text.find(needle)
        if found >= 0 and text.find(needle, found + 1) < 0:
            return places[found]
    return None


def _normalised(source: list[str], line: int) -> tuple[str, list[tuple[int, int]]]:
    """The lines from `line` on, comments dropped and whitespace runs collapsed, with each character's place."""
    chars: list[str] = []
    places: list[tuple[int, int]] = []
    for n in range(line, min(len(source), line + _SPAN) + 1):
        code = source[n - 1].split("//")[0].rstrip("\\").rstrip()
        for i, c in enumerate(code + " "):
            if c.isspace():
                if chars and chars[-1] == " ":
                    continue
                c = " "
            chars.append(c)
            places.append((n, i + 1))
    return "".join(chars), places


def _collapse(text: str, index: int) -> tuple[str, int]:
    """`text` with whitespace runs collapsed to one space (leading whitespace dropped), and where `index` went."""
    out: list[str] = []
    moved = 0
    for i, c in enumerate(text):
        if i == index:
            moved = len(out)
        if c.isspace():
            if not out or out[-1] == " ":
                continue
            c = " "
        out.append(c)
    return "".join(out), moved
