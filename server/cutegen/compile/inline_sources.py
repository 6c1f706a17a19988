"""The CUDA sources of a KernelBench/CuTeGen `ModelNew` file (Python strings passed to `load_inline`), and the way
back from nvcc's lines to the Python file's. Torch-free: the check tier reads the file, it never imports it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from cutegen.model import Diagnostic, Severity

# What load_inline puts in front of the user's CUDA sources (torch/utils/cpp_extension.py).
LOAD_INLINE_PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"


@dataclass(frozen=True)
class InlineSource:
    text: str  # the CUDA source as load_inline receives it
    line: int  # the Python line on which the string's first line lies
    exact: bool  # False when escapes (a "\n" in a non-raw string) shift the lines: then only text matching maps


def is_modelnew(path: str | Path) -> bool:
    p = Path(path)
    return p.suffix == ".py" and re.search(r"^class\s+ModelNew\b", p.read_text(errors="replace"), re.M) is not None


def cuda_sources(py_text: str) -> list[InlineSource]:
    """The `cuda_sources=` strings of every `load_inline(...)` call: literals, names bound to literals at module
    level, and lists of either."""
    out = []
    for node in string_literals(py_text, "cuda_sources"):
        value = str(node.value)  # string_literals returns str constants only
        segment = ast.get_source_segment(py_text, node) or ""
        out.append(InlineSource(value, node.lineno, segment.count("\n") == value.count("\n")))
    return out


def checked_lines(py_text: str, kinds: tuple[str, ...] = ("cuda_sources",)) -> list[str]:
    """The Python file's lines as the CUDA checker should read them: the text inside the `cuda_sources` literals
    where it stands (same lines, same columns), everything else blank. Python is not C++: a `# if` comment, a
    floor division `//` or a dict in a helper would read as broken structure to the brace and #if analysis."""
    lines = py_text.splitlines()
    keep = [""] * len(lines)
    for node in (n for kind in kinds for n in string_literals(py_text, kind)):
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start = _content_start(lines[first], node.col_offset)
        end = _content_end(lines[last], node.end_col_offset or 0)
        for n in range(first, last + 1):
            text = lines[n]
            lo = start if n == first else 0
            hi = end if n == last else len(text)
            keep[n] = " " * lo + text[lo:hi] if text[lo:hi].strip() else ""
    return keep


_OPENING = re.compile(r"[rRuUbBfF]*(\"\"\"|\'\'\'|\"|\')")


def _content_start(line: str, col_offset: int) -> int:
    """Character index where a literal's text begins (after its prefix and quotes); ast counts in UTF-8 bytes."""
    at = len(line.encode()[:col_offset].decode(errors="replace"))
    m = _OPENING.match(line, at)
    return m.end() if m else at


def _content_end(line: str, end_col_offset: int) -> int:
    at = len(line.encode()[:end_col_offset].decode(errors="replace"))
    quote = 3 if line[max(0, at - 3):at] in ('\"\"\"', "\'\'\'") else 1
    return max(0, at - quote)


def string_literals(py_text: str, keyword: str) -> list[ast.Constant]:
    """The string literals passed as `keyword=` to load_inline (directly, through module-level names, lists, +)."""
    try:
        tree = ast.parse(py_text)
    except SyntaxError:
        return []
    names = _module_strings(tree)
    out: list[ast.Constant] = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _callee(call) == "load_inline"):
            continue
        for kw in call.keywords:
            if kw.arg == keyword:
                out += _strings(kw.value, names)
    return out


_LIBRARY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?P<header>(?:cute|cutlass)/[^>"]+)[>"]')


def include_path_warnings(py_file: Path, py_text: str) -> list[Diagnostic]:
    """CuTe/CUTLASS headers included by a ModelNew whose load_inline call passes no `extra_include_paths`: the
    check finds them (it adds CUTLASS's include folder), torch's build will not (`cutegen test` fails with
    "No such file or directory"). One warning, at the first such include."""
    try:
        tree = ast.parse(py_text)
    except SyntaxError:
        return []
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and _callee(c) == "load_inline"]
    if not calls or any(kw.arg in ("extra_include_paths", None) for c in calls for kw in c.keywords):
        return []
    lines = checked_lines(py_text)
    for n, text in enumerate(lines, 1):
        m = _LIBRARY_INCLUDE.match(text)
        if m:
            message = (f"load_inline will not find <{m['header']}>: the load_inline call at line {calls[0].lineno} "
                       "passes no extra_include_paths (the check adds CUTLASS's include folder, torch's build does "
                       "not): pass extra_include_paths=[the folder holding cute/ and cutlass/]")
            col = len(text) - len(text.lstrip()) + 1
            return [Diagnostic(file=str(py_file), line=n, col=col, end_col=len(text.rstrip()) + 1,
                               severity=Severity.WARNING, message=message, code="load-inline-include-path",
                               root=message)]
    return []


def syntax_error(py_text: str) -> tuple[int, str] | None:
    """(line, message) when the Python file does not parse (then its CUDA strings cannot be found)."""
    try:
        ast.parse(py_text)
    except SyntaxError as e:
        return e.lineno or 1, f"{e.msg}"
    return None


def as_cuda_file(py_file: Path, sources: list[InlineSource]) -> str:
    """One .cu text that nvcc reports against the Python file's own lines (#line), as load_inline builds it."""
    quoted = str(py_file).replace("\\", "\\\\").replace('"', '\\"')
    parts = [LOAD_INLINE_PRELUDE]
    for s in sources:
        parts.append(f'#line {s.line} "{quoted}"\n{s.text}\n')
    return "".join(parts)


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _module_strings(tree: ast.Module) -> dict[str, ast.expr]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _strings(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> list[ast.Constant]:
    if depth > 3:
        return []
    if isinstance(node, ast.Name) and node.id in names:
        return _strings(names[node.id], names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e, names, depth + 1)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # header + kernel: each at its own lines
        return _strings(node.left, names, depth + 1) + _strings(node.right, names, depth + 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    return []


def load_inline_line(py_text: str) -> int:
    """The line of the file's first load_inline call (1 when there is none)."""
    try:
        tree = ast.parse(py_text)
    except SyntaxError:
        return 1
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and _callee(c) == "load_inline"]
    return min((c.lineno for c in calls), default=1)
