"""Scans PTX for what compiles silently but does nothing: CuTe's arch traps.

An MMA or copy atom used on an arch its CUTE_ARCH_*_ENABLED macro excludes compiles to a `trap` behind a
printf of "ERROR : Attempting to use <atom> without CUTE_ARCH_..._ENABLED". PTX stores that string as a
byte array (`.global .align 1 .b8 $str[84] = {69, 82, ...};`), so it is decoded before the search.
"""

from __future__ import annotations

import re

from cutegen.model import Diagnostic, Severity

_BYTES = re.compile(r"\.b8\s+\$?[\w$]+\[\d+\]\s*=\s*\{([\d,\s]+)\}")
# Ampere's cp.async (.ca/.cg): Hopper's TMA is cp.async.bulk*, which never takes a register address.
_CP_ASYNC = re.compile(r"\bcp\.async\.c[ag]\.")
_TRAP = re.compile(r"Attempting to use (?P<atom>[\w:<>, ]+?) without (?P<macro>CUTE_ARCH_\w+)")


def ptx_strings(ptx: str) -> list[str]:
    out = []
    for m in _BYTES.finditer(ptx):
        try:
            data = bytes(int(b) for b in m.group(1).replace("\n", "").split(",") if b.strip())
        except ValueError:
            continue
        out.append(data.rstrip(b"\0").decode("latin-1"))
    return out


def arch_traps(ptx: str) -> list[tuple[str, str]]:
    """(atom, macro) for every CuTe arch trap compiled into this PTX."""
    found = []
    for s in ptx_strings(ptx) + [ptx]:
        for m in _TRAP.finditer(s):
            item = (m["atom"].strip(), m["macro"])
            if item not in found:
                found.append(item)
    return found


def trap_diagnostics(ptx: str, source: str, file: str, arch: str) -> list[Diagnostic]:
    out = []
    for atom, macro in arch_traps(ptx):
        line = _atom_line(source, atom)
        message = (f"{atom} is used without {macro} on {arch}: this build replaced it with an assert that stops "
                   f"the kernel at run time. Use an atom made for {arch}, or build for the arch the atom needs.")
        text = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""
        col = len(text) - len(text.lstrip()) + 1
        out.append(Diagnostic(file=file, line=line, col=col, end_col=max(col + 1, len(text.rstrip()) + 1),
                              severity=Severity.WARNING, message=message, code="cute-arch-trap",
                              root=f"{atom} without {macro}",
                              data={"atom": atom, "macro": macro, "arch": arch}))
    return out


def _atom_line(source: str, atom: str) -> int:
    """The user's line naming the atom: its exact name, else its family prefix (SM90_…), else line 1."""
    base = atom.split("<")[0].split("::")[-1]
    # The exact name, its shape without the family prefix (SM90_64x64x16_… vs MMA_64x64x16_…), the family.
    candidates = [base, base.split("_", 1)[1], base.split("_")[0] + "_"] if "_" in base else [base]
    for needle in candidates:
        for i, line in enumerate(source.splitlines(), 1):
            if needle and needle in line.split("//")[0]:
                return i
    return 1


def cp_async_local_diagnostics(ptx: str, source: str, file: str, stack_bytes: int) -> list[Diagnostic]:
    """cp.async can only write shared memory. A kernel that issues cp.async and also has a stack frame has,
    almost always, a cp.async copy atom aimed at a register fragment: PTX then converts a stack address to
    a shared one and the data lands nowhere useful. nvcc says nothing about it."""
    if not _CP_ASYNC.search(ptx) or not stack_bytes or "cvta.to.shared" not in ptx:
        return []
    line = next((i for i, text in enumerate(source.splitlines(), 1) if "CP_ASYNC" in text.split("//")[0]), 1)
    message = (f"cp.async copies into a local (register) array here: cp.async can only write shared memory, so "
               f"the data goes to a bogus shared address (the kernel has a {stack_bytes} bytes stack frame). "
               "Copy global→shared with cp.async, then shared→registers with a plain copy.")
    return [Diagnostic(file=file, line=line, col=1, end_col=2, severity=Severity.WARNING, message=message,
                       code="cute-cp-async-registers", root="cp.async into registers",
                       data={"stack_bytes": stack_bytes})]
