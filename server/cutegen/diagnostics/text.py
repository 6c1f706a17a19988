"""Shortening compiler text for a one-line message without cutting a type in half."""

from __future__ import annotations

_OPEN, _CLOSE = "<([{", ">)]}"
_SEPARATORS = (", ", "; ", " — ", " [", " ")
ELLIPSIS = "…"


def fit(text: str, limit: int) -> str:
    """`text` if it fits, else its longest prefix that ends at a separator outside the shallowest possible
    bracket depth (never inside a type name when a cut between types exists), marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cuts = _cut_points(text[: limit])
    for depth in range(max((d for _, d in cuts), default=0) + 1):
        good = [i for i, d in cuts if d <= depth and i >= limit // 3]
        if good:
            return text[: max(good)].rstrip(" ,;—[") + " " + ELLIPSIS
    return text[: limit - 1] + ELLIPSIS


def _cut_points(text: str) -> list[tuple[int, int]]:
    """(index, bracket depth) of every separator in `text`."""
    out, depth = [], 0
    for i, c in enumerate(text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif any(text.startswith(s, i) for s in _SEPARATORS):
            out.append((i, depth))
    return out


def top_level_items(text: str) -> list[str]:
    """'(a<b, c>, d)' → ['a<b, c>', 'd']: the comma-separated items of a parenthesised list."""
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    items, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
    items.append(body[start:].strip())
    return [x for x in items if x]
