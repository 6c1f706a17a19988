"""Where the kernels are: `__global__` functions and the `cutegen_forward` launcher, by scanning text.

Hover and CodeLens need names and positions of the *current* text (possibly unsaved), without a
compile; a scan is enough because kernel declarations follow one simple shape.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

LAUNCHER = "cutegen_forward"
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_GLOBAL = re.compile(r"\b__global__\b")
_CALLISH = re.compile(r"([A-Za-z_]\w*)\s*\(")
_LAUNCHER = re.compile(rf"\b{LAUNCHER}\s*\(")
# Attributes that look like calls between `__global__` and the kernel's name.
_ATTRIBUTES = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__attribute__", "alignas", "__declspec"}


@dataclass(frozen=True)
class Anchor:
    name: str
    kind: str  # "kernel" or "launcher"
    line: int  # 0-based, as LSP counts
    start: int  # character range of the name on that line
    end: int
    first_line: int = -1  # the declaration's first line (`template <…>`, `__global__ void __launch_bounds__(…)`)

    @property
    def top(self) -> int:
        """Where things shown above the declaration go (CodeLens): never between its lines."""
        return self.first_line if 0 <= self.first_line <= self.line else self.line


def anchors(text: str) -> list[Anchor]:
    """Kernels and the launcher, in source order (each kernel name once: templates declare once)."""
    code = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)  # keeps offsets
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    found: dict[str, tuple[int, str]] = {}
    for m in _GLOBAL.finditer(code):
        at = _kernel_name_at(code, m.end())
        if at is not None and code[at[0]:at[1]] not in found:
            found[code[at[0]:at[1]]] = (at[0], "kernel")
    launcher = _LAUNCHER.search(code)
    if launcher:
        found.setdefault(LAUNCHER, (launcher.start(), "launcher"))
    out = []
    for name, (offset, kind) in found.items():
        line = bisect_right(starts, offset) - 1
        col = offset - starts[line]
        out.append(Anchor(name, kind, line, col, col + len(name), _first_line(code, starts, offset)))
    return sorted(out, key=lambda a: (a.line, a.start))


def _first_line(code: str, starts: list[int], offset: int) -> int:
    """The first line of the declaration holding `offset`: the first line after the previous `;`, `{` or `}` that is
    neither blank nor a preprocessor line (comments are blanked already)."""
    begin = max(code.rfind(c, 0, offset) for c in ";{}") + 1
    line = bisect_right(starts, begin) - 1
    last = bisect_right(starts, offset) - 1
    while line < last:
        text = code[max(begin, starts[line]):starts[line + 1] if line + 1 < len(starts) else len(code)].strip()
        if text and not text.startswith("#"):
            break
        line += 1
    return line


def _kernel_name_at(code: str, pos: int) -> tuple[int, int] | None:
    """The name of the function declared after `__global__` at `pos`, skipping attributes."""
    while True:
        m = _CALLISH.search(code, pos)
        if m is None or any(c in code[pos:m.start()] for c in ";{}"):
            return None
        if m.group(1) not in _ATTRIBUTES:
            return m.start(1), m.end(1)
        pos = _after_parens(code, m.end() - 1)


def _after_parens(code: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return i + 1
    return len(code)
