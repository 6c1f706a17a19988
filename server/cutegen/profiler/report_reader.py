"""Reads the per-PC data of an `.ncu-rep` through Nsight Compute's Python report interface (`ncu_report`) and
prints it as JSON: run as its own process (`python -m cutegen.profiler.report_reader R.ncu-rep`), so that a
report a jailed candidate could have written, or the C++ library behind `ncu_report`, can never take the
language server down with it.

Per kernel (one IAction each): every instanced metric that has correlation IDs (these are PCs: Nsight's
SourceCounters section), the SASS and Nsight's own source place of each PC, and the rule markers it placed.

`ncu_report` comes from PyPI (`ncu-report`), else from the toolkit's Nsight Compute (`extras/python`).
"""

from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import re
import sys
from pathlib import Path

# The SourceCounters metrics instanced per PC (other instanced metrics are keyed by opcode or occupancy step).
PER_PC = re.compile(r"^(smsp__pcsamp_warps_issue_stalled_\w+|inst_executed|thread_inst_executed\w*|"
                    r"memory_l2_theoretical_sectors_global(_ideal)?|memory_l1_wavefronts_shared(_ideal)?|"
                    r"derived__memory_l2_theoretical_sectors_global_excessive|"
                    r"derived__memory_l1_wavefronts_shared_excessive)$")
FUNCTION_PCS = "launch__function_pcs"  # the kernel's load address: a PC minus it is a cubin offset

MISSING = ("Nsight Compute's Python report interface (ncu_report) was not found: pip install ncu-report, or use "
           "an Nsight Compute with extras/python next to ncu")


def load_module(ncu: str | None):
    """`ncu_report`, or None. Looked for on sys.path, then beside the ncu binary (its real directory and the
    toolkit's `nsight-compute-*` folders, since CUDA's bin/ncu is a wrapper script)."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for folder in _candidates(ncu):
        if (Path(folder) / "ncu_report.py").is_file():
            sys.path.insert(0, folder)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(folder)
    return None


def _candidates(ncu: str | None) -> list[str]:
    out = []
    if ncu:
        real = Path(os.path.realpath(ncu)).parent
        roots = [real, real.parent, Path(ncu).parent, Path(ncu).parent.parent]
        out = [str(r / "extras" / "python") for r in roots]
        for r in roots:
            out += sorted(glob.glob(str(r / "nsight-compute*" / "extras" / "python")), reverse=True)
    # Nsight Compute's own installer's place (newest first), where the GPU machine has it
    out += sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)
    return list(dict.fromkeys(out))


def read(report: str, ncu: str | None = None) -> dict:
    module = load_module(ncu)
    if module is None:
        return {"error": MISSING}
    context = module.load_report(report)
    kernels = []
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            kernels.append(_action(module, rng.action_by_idx(a)))
    if not kernels:
        return {"error": f"{Path(report).name} holds no profiled kernel (damaged, or not an Nsight Compute report)"}
    return {"kernels": kernels, "reader": getattr(module, "__file__", "")}


def _action(module, action) -> dict:
    per_pc: dict[str, dict[str, float]] = {}
    pcs: set[int] = set()
    for name in action.metric_names():
        if not PER_PC.match(name):
            continue
        metric = action.metric_by_name(name)
        if metric is None or not metric.has_correlation_ids() or metric.num_instances() == 0:
            continue
        ids = metric.correlation_ids()
        values: dict[str, float] = {}
        for i in range(metric.num_instances()):
            pc = int(ids.as_uint64(i))
            value = metric.as_double(i) or 0.0
            if value:
                values[str(pc)] = value
                pcs.add(pc)
        if values:
            per_pc[name] = values
    places, sass = {}, {}
    for pc in sorted(pcs):
        info = action.source_info(pc)
        if info is not None:
            places[str(pc)] = [info.file_name(), int(info.line())]
        sass[str(pc)] = action.sass_by_pc(pc)
    return {"name": action.name(), "mangled": _mangled(module, action),
            "base": _function_base(action), "metrics": per_pc, "places": places, "sass": sass,
            "markers": _markers(action)}


def _mangled(module, action) -> str:
    """The kernel's mangled name (what the line table is keyed by); "" where this ncu_report cannot say."""
    try:
        return action.name(module.IAction.NameBase_MANGLED)
    except (AttributeError, TypeError):
        return ""


def _function_base(action) -> int | None:
    metric = action.metric_by_name(FUNCTION_PCS)
    if metric is None:
        return None
    if metric.num_instances():
        return int(metric.as_uint64(0))
    value = metric.as_uint64()
    return int(value) if value else None


def _markers(action) -> list[dict]:
    out: list[dict] = []
    try:
        markers = action.source_markers()
    except Exception:  # an older report interface without markers
        return out
    for m in markers:
        where = m.get("source_location") or {}
        out.append({"rule": m.get("rule_identifier", ""), "message": str(m.get("message", ""))[:600],
                    "file": where.get("file_name"), "line": where.get("line"), "pc": m.get("source_address")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--ncu", help="the ncu binary whose extras/python holds ncu_report")
    args = ap.parse_args()
    try:
        out = read(args.report, args.ncu)
    except Exception as e:  # a damaged report: say what, as data
        out = {"error": f"ncu_report could not read {Path(args.report).name}: {type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
