"""Run records (test, bench, profile) and check results as the short texts hovers and CodeLens show.

The figures come from the typed record (records.RunRecord.summary): the CLI and the status bar show the same line.
"""

from __future__ import annotations

import time
from pathlib import Path

from cutegen import records
from cutegen.model import CheckResult, KernelResources
from cutegen.records import RunKind, RunRecord

RUN_KINDS = (RunKind.TEST.value, RunKind.BENCH.value, RunKind.PROFILE.value)


def latest(state_dir: Path, file: str) -> dict[str, RunRecord]:
    """The newest record of each run kind for `file` (kinds without one are left out)."""
    found = {kind: records.latest(state_dir, file, kind) for kind in RUN_KINDS}
    return {kind: rec for kind, rec in found.items() if rec}


def age(record: RunRecord) -> str:
    seconds = max(0.0, time.time() - (record.time or time.time()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit} ago"
    return "just now"


def resources_title(result: CheckResult | None, kernel: str | None) -> str:
    """'22 regs · 0 B smem · no spills' for one kernel (all instantiations), or all kernels when None."""
    if result is None:
        return "not checked yet"
    if result.errors:
        return f"does not compile ({len(result.errors)} error{'s' * (len(result.errors) > 1)})"
    mine = [k for k in result.resources if kernel is None or k.name == kernel]
    if not mine:
        return "not instantiated in this file" if kernel else "no kernels compiled"
    return _figures(mine, "instantiations" if kernel else "kernels")


def _figures(kernels: list[KernelResources], plural: str) -> str:
    regs = sorted({k.registers for k in kernels})
    smem = max(k.shared_bytes for k in kernels)
    spills = sum(k.spill_stores + k.spill_loads for k in kernels)
    reg_text = f"{regs[0]}" if len(regs) == 1 else f"{regs[0]}–{regs[-1]}"
    text = f"{reg_text} regs · {smem} B smem · " + (f"{spills} B spills" if spills else "no spills")
    return f"{len(kernels)} {plural}: {text}" if len(kernels) > 1 else text
