"""The CUDA sources of a KernelBench/CuTeGen `ModelNew` file (Python strings passed to `load_inline`), and the way
back from nvcc's lines to the Python file's. Torch-free: the check tier reads the file, it never imports it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from cutegen.diagnostics import parse_log
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
    for node in _cuda_literals(py_text):
        segment = ast.get_source_segment(py_text, node) or ""
        out.append(InlineSource(node.value, node.lineno, segment.count("\n") == node.value.count("\n")))
    return out


def checked_lines(py_text: str) -> list[str]:
    """The Python file's lines as the CUDA checker should read them: the text inside the `cuda_sources` literals
    where it stands (same lines, same columns), everything else blank. Python is not C++: a `# if` comment, a
    floor division `//` or a dict in a helper would read as broken structure to the brace and #if analysis."""
    lines = py_text.splitlines()
    keep = [""] * len(lines)
    for node in _cuda_literals(py_text):
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


def _cuda_literals(py_text: str) -> list[ast.Constant]:
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
            if kw.arg == "cuda_sources":
                out += _strings(kw.value, names)
    return out


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


# -- load_inline's own build errors (cutegen test on a ModelNew) --------------------------------------------------


def map_build_errors(log: str, py_file: Path) -> list[Diagnostic]:
    """nvcc errors in load_inline's generated cuda.cu/main.cpp → the lines of the Python file holding that code.

    The generated file is the user's string plus a few include lines torch adds, so a line's text identifies
    its place in the Python file; where a text repeats, the neighbouring lines decide."""
    py_lines = py_file.read_text(errors="replace").splitlines()
    out: list[Diagnostic] = []
    for m in parse_log(log):
        if m.severity not in ("error", "fatal") or not m.file:
            continue
        generated = Path(m.file)
        line = locate(generated.read_text(errors="replace").splitlines(), m.line or 0, py_lines) \
            if generated.exists() else None
        text = line and py_lines[line - 1]
        col = (len(text) - len(text.lstrip()) + 1) if text else 1
        out.append(Diagnostic(file=str(py_file), line=line or 1, col=col, end_col=max(col + 1, len(text or "") + 1),
                              severity=Severity.ERROR, message=m.text, code=f"edg-{m.code}" if m.code else "load-inline",
                              root=m.text, data={"generated": f"{generated.name}:{m.line}"}))
    return out


def locate(gen: list[str], line: int, py_lines: list[str]) -> int | None:
    """The Python line holding line `line` of the generated source `gen`, by its text."""
    if not 0 < line <= len(gen):
        return None
    target = gen[line - 1].strip()
    candidates = [i for i, t in enumerate(py_lines, 1) if t.strip() == target and target]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None

    def context_score(i: int) -> int:
        return sum(1 for d in (-2, -1, 1, 2)
                   if 0 < i + d <= len(py_lines) and 0 < line + d <= len(gen)
                   and py_lines[i + d - 1].strip() == gen[line + d - 1].strip())
    return max(candidates, key=context_score)
