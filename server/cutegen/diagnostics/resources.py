"""Resource usage from `ptxas -v` (registers, shared memory, stack, spills) and the warnings it implies."""

from __future__ import annotations

import re
import shutil
import subprocess

from cutegen.diagnostics.cute_types import compact_type, parse_type, to_cute
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
    """Mangled → readable: the `cpp_demangle` package (LLVM's rules; GNU c++filt gives up on CUTLASS's
    device_kernel names), else cu++filt / c++filt, then llvm-cxxfilt for what is still mangled; a name no tool
    reads stays mangled."""
    out = {n: n for n in names}
    try:
        import cpp_demangle
    except ImportError:
        cpp_demangle = None
    for n in names if cpp_demangle else ():
        try:
            out[n] = cpp_demangle.demangle(n)
        except Exception:  # its own error types differ between versions: any failure leaves the name to the tools
            pass
    for tool in (cufilt, shutil.which("llvm-cxxfilt")):
        left = [n for n in names if out[n] == n]
        if left and tool:
            out.update(_filtered(left, tool))
    return out


def _filtered(names: list[str], tool: str) -> dict[str, str]:
    try:
        readable = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return {n: r for n, r in zip(names, readable.splitlines()) if r and not r.startswith("_Z")}


def short_kernel_name(readable: str) -> str:
    """'void ns::softsign_kernel<128>(const float *, float *, int)' → 'softsign_kernel'."""
    head = _name_with_arguments(readable)
    return _strip_namespace(_without_arguments(head)) or readable


def kernel_instantiation(readable: str, limit: int = 120) -> str:
    """'void ns::k<float, 512>(const float *, int)' → 'k<float, 512>': the name with its template arguments, as a
    person reads them: CuTe notation, no namespaces, no defaulted `void` arguments, and when that is still too
    long, the outer levels first with deeper ones folded into `<…>` (a CUTLASS kernel's 4,900 characters →
    `device_kernel<GemmUniversal<(int,int,int,int), CollectiveMma<…>, CollectiveEpilogue<…>, PersistentScheduler>>`)."""
    head = _name_with_arguments(readable)
    if "<" not in head:
        return short_kernel_name(readable)
    return _Folded(_node(parse_type(head))).fit(limit)


def _name_with_arguments(readable: str) -> str:
    """'void ns::k<float, 2>(int)' → 'ns::k<float, 2>': the return type and the parameters dropped."""
    head = _before_parameters(readable).strip()
    depth, start = 0, 0
    for i, c in enumerate(head):
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == " " and depth == 0:
            start = i + 1
    return head[start:]


def _without_arguments(name: str) -> str:
    at = name.find("<")
    return name[:at] if at >= 0 else name


_CAST = re.compile(r"^\((?:[\w:]+)\)\s*")  # '(cute::SM90::GMMA::Major)0' → '0'
_CUTE_LEAVES = {"tuple", "Shape", "Stride", "Step", "Coord", "Tile", "Layout", "ComposedLayout", "Swizzle", "C", "Int",
                "constant", "Underscore", "Tensor"}


def _strip_namespace(name: str) -> str:
    name = _CAST.sub("", name.strip())
    return name.rsplit("::", 1)[-1] if "::" in name and not name.startswith("(") else name


def _node(t) -> "_Part":
    """A parsed type as labels and arguments: CuTe's own types are one leaf in its notation."""
    bare = _strip_namespace(t.name)
    if not t.args or bare in _CUTE_LEAVES:
        return _Part(compact_type(to_cute(t)) if t.args else bare, [])
    return _Part(bare, [_node(a) for a in t.args if _strip_namespace(a.name) != "void" or a.args])


class _Part:
    def __init__(self, label: str, args: list["_Part"]) -> None:
        self.label, self.args, self.shown = label, args, 0  # shown: how many arguments are spelled out


class _Folded:
    """Spell out arguments breadth-first, each level left to right, as long as the whole still fits."""

    def __init__(self, root: _Part) -> None:
        self.root = root

    def text(self, part: _Part | None = None) -> str:
        part = part or self.root
        if not part.args:
            return part.label
        if not part.shown:
            return f"{part.label}<…>"
        inner = ", ".join(self.text(a) for a in part.args[:part.shown])
        return f"{part.label}<{inner}{', …' if part.shown < len(part.args) else ''}>"

    def fit(self, limit: int) -> str:
        level = [self.root]
        while level:
            deeper = []
            for part in level:
                for shown in range(len(part.args), 0, -1):
                    part.shown = shown
                    if len(self.text()) <= limit:
                        break
                else:
                    part.shown = 0
                deeper += part.args[:part.shown]
            level = [p for p in deeper if p.args]
        text = self.text()
        return text if len(text) <= limit else fit(text, limit)


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
                f"{k.instantiation or k.name} spills registers to local memory: {k.spill_stores} bytes spill stores, "
                f"{k.spill_loads} bytes spill loads ({k.registers} registers used). Lower register pressure "
                "(smaller per-thread tiles, fewer live fragments) or allow more registers per thread "
                "(__launch_bounds__).", k))
        elif k.stack_bytes:
            out.append(_at(file, line, Severity.WARNING, "ptxas-stack",
                f"{k.instantiation or k.name} uses a {k.stack_bytes} B stack frame: a local array indexed at run time, "
                "or a non-inlined call, lives in local memory (slow). Index register arrays only with "
                "compile-time constants.", k))
        out.append(_at(file, line, Severity.INFO, "ptxas-resources", k.summary(), k))
    return out


def _at(file: str, line: int, severity: Severity, code: str, message: str, k: KernelResources) -> Diagnostic:
    return Diagnostic(file=file, line=line, col=1, end_col=2, severity=severity, message=message, code=code,
                      root=message, data={"kernel": k.name, "registers": k.registers, "spill_stores": k.spill_stores,
                                          "spill_loads": k.spill_loads, "stack_bytes": k.stack_bytes})
