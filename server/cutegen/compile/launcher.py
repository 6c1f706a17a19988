"""A kernel file paired with a problem must export the ABI launcher the harness calls; say so at check time
(without it, only a GPU run would tell, after a full build).

Not for a PyTorch extension's source (what `load`/`load_inline` compile: it includes torch's headers, binds with
pybind11 or takes `torch::Tensor`s), nor for a file whose "problem" is a ModelNew file: that file is the kernel's
loader, and the harness tests the ModelNew, never a `cutegen_forward`."""

from __future__ import annotations

import re
from pathlib import Path

from cutegen.compile.inline_sources import is_modelnew
from cutegen.model import Diagnostic, Severity

LAUNCHER = "cutegen_forward"
# ABI v2 (include/cutegen/abi.h): the same call with the model's get_init_inputs() values first.
LAUNCHER_V2 = "cutegen_forward_v2"
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_GLOBAL = re.compile(r"^.*\b__global__\b", re.M)
_DIRECTIVE = re.compile(r"(?://|#)\s*cutegen:\s*problem\s*=", re.M)


_EXTENSION = re.compile(r'^\s*#\s*include\s*[<"](?:torch|ATen|c10|pybind11)/|\bPYBIND11_MODULE\s*\(|\bTORCH_LIBRARY'
                        r'(?:_IMPL)?\s*\(|\b(?:torch|at)::Tensor\b', re.M)


def defines_launcher(source: str) -> bool:
    return re.search(rf"\b(?:{LAUNCHER}|{LAUNCHER_V2})\s*\(", _COMMENTS.sub("", source)) is not None


def is_extension_source(source: str) -> bool:
    """Compiled by torch.utils.cpp_extension (load / load_inline), so tested through a ModelNew."""
    return _EXTENSION.search(_COMMENTS.sub("", source)) is not None


def missing_launcher(path: Path, source: str, problem: Path) -> Diagnostic | None:
    """A warning at the problem directive (else the first kernel, else line 1) when `cutegen_forward` is absent
    from a file the harness would call through it (see the module doc)."""
    if defines_launcher(source) or is_extension_source(source) or _is_modelnew(problem):
        return None
    line = _line_of(_DIRECTIVE, source) or _line_of(_GLOBAL, source) or 1
    text = source.splitlines()[line - 1] if source else ""
    col = len(text) - len(text.lstrip()) + 1
    message = (f"no `{LAUNCHER}` launcher: this file is paired with {problem.name}, but the harness can only test "
               f"a kernel through `CUTEGEN_EXPORT int {LAUNCHER}(const DLTensor* inputs, int num_inputs, "
               "DLTensor* outputs, int num_outputs, cudaStream_t stream)` (#include <cutegen/abi.h>)")
    return Diagnostic(file=str(path), line=line, col=col, end_col=max(col + 1, len(text.rstrip()) + 1),
                      severity=Severity.WARNING, message=message, code="missing-launcher", root=message,
                      data={"problem": str(problem)})


def _is_modelnew(path: Path) -> bool:
    try:
        return is_modelnew(path)
    except OSError:
        return False


def _line_of(pattern: re.Pattern, source: str) -> int | None:
    m = pattern.search(source)
    return source.count("\n", 0, m.start()) + 1 if m else None
