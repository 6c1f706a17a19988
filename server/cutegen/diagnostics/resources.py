"""Resource usage from `ptxas -v` (registers, shared memory, stack, spills) and the warnings it implies."""

from __future__ import annotations

import re
import subprocess

from cutegen.diagnostics.cute_types import compact_type, cute_notation
from cutegen.diagnostics.text import fit
from cutegen.model import Diagnostic, KernelResources, Severity

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPS = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers(?:, used (?P<bar>\d+) barriers)?(?P<rest>.*)")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_verbose(log: str) -> list[KernelResources]:
    kernels: list[KernelResources] = []
    current: KernelResources | None = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = KernelResources(name=m["name"], mangled=m["name"], arch=m["arch"])
            kernels.append(current)
            continue
        if current is None:
            continue
        m = _PROPS.search(line)
        if m:
            current.stack_bytes, current.spill_stores, current.spill_loads = int(m["stack"]), int(m["st"]), int(m["ld"])
            continue
        m = _USED.search(line)
        if m:
            current.registers = int(m["regs"])
            current.barriers = int(m["bar"] or 0)
            smem = _SMEM.search(m["rest"])
            current.shared_bytes = int(smem.group(1)) if smem else 0
    return kernels


def demangle(names: list[str], cufilt: str | None) -> dict[str, str]:
    """Mangled → readable, through cu++filt (ships with nvcc) or c++filt; names stay mangled without them."""
    if not names or not cufilt:
        return {n: n for n in names}
    try:
        out = subprocess.run([cufilt], input="\n".join(names), capture_output=True, text=True, timeout=20).stdout
        readable = out.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return {n: n for n in names}
    return {n: (r or n) for n, r in zip(names, readable)}


def short_kernel_name(readable: str) -> str:
    """'void ns::softsign_kernel<128>(const float *, float *, int)' → 'softsign_kernel'."""
    head = readable.split("(", 1)[0]
    head = re.sub(r"<.*>$", "", head).strip()
    return head.split()[-1].split("::")[-1] if head else readable


def kernel_instantiation(readable: str, limit: int = 120) -> str:
    """'void ns::k<float, 512>(const float *, int)' → 'k<float, 512>': the name with its template arguments
    (in CuTe notation, shortened between arguments, never inside one)."""
    head = _before_parameters(readable)
    name = short_kernel_name(readable)
    at = head.find(name + "<")
    if at < 0:
        return name
    return fit(compact_type(cute_notation(head[at:].strip())), limit)


def _before_parameters(readable: str) -> str:
    """The text before the parameter list: the first '(' outside template brackets."""
    depth = 0
    for i, c in enumerate(readable):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            return readable[:i]
    return readable


def kernel_line(source: str, name: str) -> int | None:
    """The line of the `__global__` that declares `name` (the first one: templates are declared once)."""
    pattern = re.compile(rf"__global__[^;{{]*?\b{re.escape(name)}\s*\(", re.S)
    m = pattern.search(source)
    if not m:
        m = re.search(rf"\b{re.escape(name)}\s*\(", source)
    if not m:
        return None
    return source.count("\n", 0, m.start()) + 1


def resource_diagnostics(kernels: list[KernelResources], file: str) -> list[Diagnostic]:
    """Spills and stack frames are warnings at the kernel's declaration; usage itself is information."""
    out = []
    for k in kernels:
        line = k.line or 1
        if k.spill_stores or k.spill_loads:
            out.append(_at(file, line, Severity.WARNING, "ptxas-spill",
                f"{k.instantiation or k.name} spills registers to local memory: {k.spill_stores} bytes spill stores, {k.spill_loads} bytes spill loads "
                f"({k.registers} registers used). Lower register pressure (smaller per-thread tiles, fewer live "
                "fragments) or allow more registers per thread (__launch_bounds__).", k))
        elif k.stack_bytes:
            out.append(_at(file, line, Severity.WARNING, "ptxas-stack",
                f"{k.instantiation or k.name} uses a {k.stack_bytes} B stack frame: a local array indexed at run time, or a "
                "non-inlined call, lives in local memory (slow). Index register arrays only with "
                "compile-time constants.", k))
        out.append(_at(file, line, Severity.INFO, "ptxas-resources", k.summary(), k))
    return out


def _at(file: str, line: int, severity: Severity, code: str, message: str, k: KernelResources) -> Diagnostic:
    return Diagnostic(file=file, line=line, col=1, end_col=2, severity=severity, message=message, code=code,
                      root=message, data={"kernel": k.name, "registers": k.registers, "spill_stores": k.spill_stores,
                                          "spill_loads": k.spill_loads, "stack_bytes": k.stack_bytes})
