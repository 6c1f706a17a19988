"""What `cutegen test` reads from torch's own load_inline failure (the worker builds a ModelNew with it): nvcc's
messages on the build files load_inline generates, moved to the Python file's lines and condensed as a check's
are. The caller puts the check tier's diagnostics first where the check reproduces the failure (harness/run.py)."""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import replace
from pathlib import Path

from cutegen.compile.inline_sources import checked_lines, load_inline_line, string_literals
from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.nvcc_log import RawMessage
from cutegen.diagnostics.resources import demangle
from cutegen.model import Diagnostic, Severity

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
    for node in string_literals(py_text, keyword):
        value = str(node.value)  # string_literals returns str constants only
        count = value.count("\n") + 1
        segment = ast.get_source_segment(py_text, node) or ""
        spans.append((start, count, node.lineno, segment.count("\n") == value.count("\n")))
        start += count
        generated += value.split("\n")
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
        if file is None or to_python is None:
            return file, line
        mapped = to_python(line or 0)
        generated = _read_lines(file)  # the real file, where it is still there, checks the count
        if generated and (mapped is None or not _same_text(generated, line or 0, py_lines, mapped)):
            mapped = locate(generated, line or 0, py_lines) or mapped  # another torch's layout: by the text
        return (py, mapped) if mapped else (file, line)
    def moved(frame):  # a frame always has a place: place() keeps it or moves it into the .py
        file, line = place(frame.file, frame.line)
        return replace(frame, file=file or frame.file, line=line if line is not None else frame.line)
    file, line = place(m.file, m.line)
    return replace(m, file=file, line=line, frames=[moved(f) for f in m.frames],
                   note_places=[moved(f) for f in m.note_places])


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
    line = load_inline_line(py_text)
    text = py_text.splitlines()[line - 1] if 0 < line <= len(py_text.splitlines()) else ""
    col = len(text) - len(text.lstrip()) + 1
    return Diagnostic(file=str(py_file), line=line, col=col, end_col=max(col + 1, len(text) + 1),
                      severity=Severity.ERROR, message=message, code="load-inline", root=message)


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
