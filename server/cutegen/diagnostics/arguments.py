"""The k-th argument of the call that starts at a place in the source: where nvcc says "argument #k does not
match parameter", the argument (often lines below the call's first line) is the thing to change."""

from __future__ import annotations

import re

_SPAN = 60  # lines a call's arguments may cover
_NAME = re.compile(r"[\w:]+")


def argument_position(source: list[str], line: int, col: int | None, k: int) -> tuple[int, int] | None:
    """(line, col) of argument k (1-based) of the call whose callee starts at (line, col); kernel launches
    (`f<T><<<grid, block>>>(args)`) included. None when the text there is not such a call."""
    if not 0 < line <= len(source) or k < 1:
        return None
    text, places = _text(source, line)
    i = (col or 1) - 1
    name = _NAME.match(text, i)
    if name is None:
        return None
    i = _skip_space(text, name.end())
    if text.startswith("<", i) and not text.startswith("<<<", i):
        i = _skip_space(text, _balanced(text, i, "<", ">"))
    if text.startswith("<<<", i):
        end = text.find(">>>", i)
        if end < 0:
            return None
        i = _skip_space(text, end + 3)
    if not text.startswith("(", i):
        return None
    depth, n = 0, 1
    for j in range(i + 1, len(text)):
        c = text[j]
        if n == k and depth == 0 and not c.isspace():
            return places[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return None
            depth -= 1
        elif c == "," and depth == 0:
            n += 1
    return None


def _text(source: list[str], line: int) -> tuple[str, list[tuple[int, int]]]:
    chars, places = [], []
    for n in range(line, min(len(source), line + _SPAN) + 1):
        code = source[n - 1].split("//")[0]
        for i, c in enumerate(code + "\n"):
            chars.append(c)
            places.append((n, i + 1))
    return "".join(chars), places


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _balanced(text: str, i: int, open_: str, close: str) -> int:
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)
