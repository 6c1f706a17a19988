"""Run records (test, bench, profile, check) as one-line figures for hovers and CodeLens.

The harness and profiler are written separately; their payloads are read defensively: a `summary`
string wins, else well-known keys are picked out, else the record is only dated.
"""

from __future__ import annotations

import time
from pathlib import Path

from cutegen import records
from cutegen.model import CheckResult, KernelResources

RUN_KINDS = ("test", "bench", "profile")
_FIGURES = (  # payload key → how it reads
    ("speedup", "{:.2f}× vs reference"), ("time_ms", "{:.3g} ms"), ("median_ms", "{:.3g} ms"),
    ("max_abs_error", "max abs err {:.2g}"), ("bandwidth_tbs", "{:.2f} TB/s"), ("bottleneck", "{}"),
)


def latest(state_dir: Path, file: str) -> dict[str, dict]:
    """The newest record of each run kind for `file` (kinds without one are left out)."""
    found = {kind: records.latest(state_dir, file, kind) for kind in RUN_KINDS}
    return {kind: rec for kind, rec in found.items() if rec}


def record_path(state_dir: Path, file: str, kind: str) -> Path | None:
    folder = getattr(records, "_folder", None)  # records has no public path helper yet
    return folder(state_dir, file) / f"latest-{kind}.json" if folder else None


def summary(record: dict) -> str:
    if isinstance(record.get("summary"), str):
        return record["summary"]
    parts = []
    verdict = record.get("verdict")
    if verdict is None and isinstance(record.get("ok"), bool):
        verdict = "passed" if record["ok"] else "failed"
    if verdict is not None:
        parts.append(str(verdict))
    for key, fmt in _FIGURES:
        if key in record:
            try:
                parts.append(fmt.format(record[key]))
            except (TypeError, ValueError):
                parts.append(f"{key} {record[key]}")
    return " · ".join(parts) or "recorded"


def age(record: dict) -> str:
    seconds = max(0.0, time.time() - float(record.get("time", time.time())))
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
