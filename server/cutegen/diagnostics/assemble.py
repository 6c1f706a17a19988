"""One compile's diagnostics, assembled: nvcc's log condensed to located diagnostics, ptxas's messages and
resources at the kernels they name, and what only the PTX shows (traps, cp.async into local memory).

The check line is straight: the Builder runs the compiler and hands its log here (`diagnose`); the type tier
reads clang's answer with the same `SourceLines`. Nothing here runs the compiler; `cu++filt` (demangling) is
the one process it starts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from cutegen.diagnostics.condense import condense
from cutegen.diagnostics.nvcc_log import RawMessage, parse_log
from cutegen.diagnostics.ptx import cp_async_local_diagnostics, trap_diagnostics
from cutegen.diagnostics.resources import (
    demangle, kernel_instantiation, kernel_line, parse_ptxas_verbose, resource_diagnostics, short_kernel_name,
)
from cutegen.model import Diagnostic, KernelResources, Severity

Where = Callable[[str], bool]  # a question about a file: is it the user's? are its warnings quiet?


def diagnose(log: str, path: Path, source: str, lines: list[str], ptx: Path | None, *, arch: str,
             demangler: str | None, is_user: Where, is_quiet: Where) -> tuple[list[Diagnostic], list[KernelResources]]:
    """The diagnostics and kernel resources of one compile of `path`, whose text is `source` (`lines`: as the
    condenser should read it, e.g. only a ModelNew's CUDA strings), from its log and, for a check, its PTX."""
    messages = [m for m in parse_log(log) if not (m.severity == "warning" and m.file and is_quiet(m.file))]
    diagnostics = condense(messages, str(path), is_user, SourceLines(path, lines))
    resources = parse_ptxas_verbose(log)
    readable = demangle([k.mangled for k in resources], demangler)
    for k in resources:
        k.name = short_kernel_name(readable.get(k.mangled, k.mangled))
        k.instantiation = kernel_instantiation(readable.get(k.mangled, k.mangled))
        k.line = kernel_line(source, k.name)
    diagnostics += ptxas_messages(messages, path, source, readable)
    diagnostics += resource_diagnostics(resources, str(path))
    if ptx is not None and ptx.exists():
        text = ptx.read_text(errors="replace")
        diagnostics += trap_diagnostics(text, source, str(path), arch)
        stack = max((k.stack_bytes for k in resources), default=0)
        diagnostics += cp_async_local_diagnostics(text, source, str(path), stack)
    return diagnostics, resources


def file_level(path: Path, message: str, code: str) -> Diagnostic:
    """An error about the whole file (a timeout, nvcc failing without a message): shown on its first line."""
    return Diagnostic(file=str(path), line=1, col=1, end_col=2, severity=Severity.ERROR, message=message, code=code,
                      root=message)


def ptxas_messages(messages: list[RawMessage], path: Path, source: str, readable: dict[str, str]) -> list[Diagnostic]:
    """ptxas errors and warnings (e.g. C7510 wgmma serialization) at the kernel they name."""
    out = []
    for m in messages:
        if m.tool != "ptxas":
            continue
        line = 1
        for mangled in re.findall(r"'(_Z\w+)'", m.text):
            line = kernel_line(source, short_kernel_name(readable.get(mangled, mangled))) or line
        text = m.text
        for mangled, name in readable.items():
            text = text.replace(mangled, short_kernel_name(name))
        severity = Severity.ERROR if m.severity in ("error", "fatal") else Severity.WARNING
        code = f"ptxas-{m.code}" if m.code else f"ptxas-{m.severity}"
        out.append(Diagnostic(file=str(path), line=line, col=1, end_col=2, severity=severity,
                              message=f"ptxas: {text}", code=code, root=text))
    return out


class SourceLines:
    """Source lines by file; the main file's come from the (possibly unsaved) text being compiled."""

    def __init__(self, main: Path, lines: list[str]):
        self._files = {str(main): lines}

    def __call__(self, file: str) -> list[str]:
        if file not in self._files:
            try:
                self._files[file] = Path(file).read_text(errors="replace").splitlines()
            except OSError:
                self._files[file] = []
        return self._files[file]
