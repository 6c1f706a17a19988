"""The CUDA sources of a KernelBench/CuTeGen `ModelNew` file (Python strings passed to `load_inline`), and the way
back from nvcc's lines to the Python file's. Torch-free: the check tier reads the file, it never imports it."""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.nvcc_log import RawMessage
from cutegen.diagnostics.resources import demangle
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
    for node in _literals(py_text, "cuda_sources"):
        segment = ast.get_source_segment(py_text, node) or ""
        out.append(InlineSource(node.value, node.lineno, segment.count("\n") == node.value.count("\n")))
    return out


def checked_lines(py_text: str, kinds: tuple[str, ...] = ("cuda_sources",)) -> list[str]:
    """The Python file's lines as the CUDA checker should read them: the text inside the `cuda_sources` literals
    where it stands (same lines, same columns), everything else blank. Python is not C++: a `# if` comment, a
    floor division `//` or a dict in a helper would read as broken structure to the brace and #if analysis."""
    lines = py_text.splitlines()
    keep = [""] * len(lines)
    for node in (n for kind in kinds for n in _literals(py_text, kind)):
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


def _literals(py_text: str, keyword: str) -> list[ast.Constant]:
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


# -- load_inline's own build errors (cutegen test on a ModelNew) --------------------------------------------------

# How torch.utils.cpp_extension.load_inline writes its build files: the strings joined by newlines after these
# lines (torch 2.x), so a generated line maps to its string's Python line by counting, as the check's #line does.
GENERATED = {"cuda.cu": ("cuda_sources", 3), "main.cpp": ("cpp_sources", 1)}
_UNDEFINED_SYMBOL = re.compile(r"undefined symbol: (?P<symbol>\S+)")


def map_build_errors(log: str, py_file: Path) -> list[Diagnostic]:
    """load_inline's build failure → the condensed diagnostics a check gives, at the Python file's lines: nvcc's
    messages on the generated cuda.cu (and the host compiler's on main.cpp), their instantiation frames and notes
    moved to the Python lines of the strings, then the same condenser; its errors. What no compiler message places
    (a link error, a library that does not load, ninja's own failure) is one error at the load_inline call."""
    py_text = py_file.read_text(errors="replace")
    py = str(py_file)
    maps = {name: _line_map(py_text, kw, prelude) for name, (kw, prelude) in GENERATED.items()}
    messages = [_relocated(m, maps, py) for m in parse_log(log)]
    # The strings where they stand (no load_inline call found: the file as it is)
    lines = checked_lines(py_text, kinds=("cuda_sources", "cpp_sources"))
    lines = lines if any(lines) else py_text.splitlines()
    diagnostics = condense(messages, py, lambda f: f == py, lambda f: lines if f == py else _read_lines(f))
    return [d for d in diagnostics if d.severity is Severity.ERROR] or [_unplaced_failure(log, py_file, py_text)]


def _line_map(py_text: str, keyword: str, prelude: int):
    """Generated line → Python line, for the strings of `keyword` (None for torch's own lines). A string whose
    escapes change its line count (a backslash-newline in a non-raw string) is placed by its lines' text."""
    spans, start, generated = [], prelude + 1, [""] * prelude
    for node in _literals(py_text, keyword):
        count = node.value.count("\n") + 1
        segment = ast.get_source_segment(py_text, node) or ""
        spans.append((start, count, node.lineno, segment.count("\n") == node.value.count("\n")))
        start += count
        generated += node.value.split("\n")
    py_lines = py_text.splitlines()

    def to_python(line: int) -> int | None:
        for first, count, py_line, exact in spans:
            if first <= line < first + count:
                return py_line + (line - first) if exact else locate(generated, line, py_lines)
        return None
    return to_python


def _relocated(m: RawMessage, maps: dict, py: str) -> RawMessage:
    py_lines = Path(py).read_text(errors="replace").splitlines()

    def place(file: str | None, line: int | None) -> tuple[str | None, int | None]:
        to_python = maps.get(Path(file).name) if file else None
        if to_python is None:
            return file, line
        mapped = to_python(line or 0)
        generated = _read_lines(file)  # the real file, where it is still there, checks the count
        if generated and (mapped is None or not _same_text(generated, line or 0, py_lines, mapped)):
            mapped = locate(generated, line or 0, py_lines) or mapped  # another torch's layout: by the text
        return (py, mapped) if mapped else (file, line)
    file, line = place(m.file, m.line)
    frames = [replace(f, file=place(f.file, f.line)[0], line=place(f.file, f.line)[1]) for f in m.frames]
    notes = [replace(f, file=place(f.file, f.line)[0], line=place(f.file, f.line)[1]) for f in m.note_places]
    return replace(m, file=file, line=line, frames=frames, note_places=notes)


def _same_text(generated: list[str], line: int, py_lines: list[str], py_line: int) -> bool:
    return 0 < line <= len(generated) and 0 < py_line <= len(py_lines) and \
        generated[line - 1].strip() == py_lines[py_line - 1].strip()


def _unplaced_failure(log: str, py_file: Path, py_text: str) -> Diagnostic:
    symbol = _UNDEFINED_SYMBOL.search(log)
    if symbol:
        name = demangle([symbol["symbol"]], shutil.which("c++filt")).get(symbol["symbol"], symbol["symbol"])
        message = (f"the extension built but does not load: undefined symbol `{name}` (a function declared in "
                   "cpp_sources or named in functions= that no source defines)")
    else:
        tail = [x.strip() for x in log.strip().splitlines() if x.strip()][-3:]
        message = "load_inline failed: " + (" / ".join(tail) if tail else "no compiler message")
    line = _load_inline_line(py_text)
    text = py_text.splitlines()[line - 1] if 0 < line <= len(py_text.splitlines()) else ""
    col = len(text) - len(text.lstrip()) + 1
    return Diagnostic(file=str(py_file), line=line, col=col, end_col=max(col + 1, len(text) + 1),
                      severity=Severity.ERROR, message=message, code="load-inline", root=message)


def _load_inline_line(py_text: str) -> int:
    try:
        tree = ast.parse(py_text)
    except SyntaxError:
        return 1
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and _callee(c) == "load_inline"]
    return min((c.lineno for c in calls), default=1)


def _read_lines(file: str) -> list[str]:
    try:
        return Path(file).read_text(errors="replace").splitlines()
    except OSError:
        return []


def locate(gen: list[str], line: int, py_lines: list[str]) -> int | None:
    """The Python line holding line `line` of the generated source `gen`, by its text (the neighbouring lines
    decide where a text repeats)."""
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
