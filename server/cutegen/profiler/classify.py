"""Why a kernel is slow: NVIDIA's Speed-of-Light rule, a roofline position against the ceilings of the GPU that
ran it (hardware.py), and signals, each with the evidence that triggered it (what the knowledge base and the agent
act on)."""

from __future__ import annotations

import re

from cutegen.hardware import Gpu
from cutegen.profiler.ncu_csv import byte_count, seconds
from cutegen.profiler.signals import Signal

PEAK_MATH = {"tensor-bf16": "bfloat16", "tensor-fp16": "float16", "tensor-tf32": "tf32", "ffma": "ffma"}

SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


def _num(k: dict, name: str) -> float | None:
    v = k.get(name)
    return float(v) if isinstance(v, (int, float)) else None


def _find(k: dict, pattern: str) -> dict[str, float]:
    rx = re.compile(pattern)
    return {n: float(v) for n, v in k.items() if isinstance(v, (int, float)) and rx.search(n)}


def speed_of_light(sm: float, mem: float) -> tuple[str, str]:
    """NVIDIA's rule (SpeedOfLight section): both < 60 → latency; either ≥ 80 → high throughput of that unit;
    else ≥ 10 apart → compute- or memory-heavy; otherwise balanced."""
    if sm < 60 and mem < 60:
        return "latency", f"SM {sm:.0f} % and memory {mem:.0f} % of peak are both under 60 %: a latency issue"
    if sm >= 80 or mem >= 80:
        unit = "compute" if sm >= mem else "memory"
        return unit, f"high {unit} throughput: SM {sm:.0f} %, memory {mem:.0f} % of peak"
    if abs(sm - mem) >= 10:
        unit = "compute" if sm > mem else "memory"
        return unit, f"{unit}-heavy: SM {sm:.0f} %, memory {mem:.0f} % of peak"
    return "balanced", f"compute and memory balanced: SM {sm:.0f} %, memory {mem:.0f} % of peak"


def summarize(kernels: list[dict], *, gpu: Gpu, flops: int | None, dtype: str, spills: int = 0,
              wgmma_serialized: bool = False) -> dict:
    """Classification and signals for the kernels of one call (the longest one drives the SOL rule)."""
    main = max(kernels, key=lambda k: seconds(k) or 0.0)
    total_s = sum(seconds(k) or 0.0 for k in kernels)
    dram = sum(byte_count(k, "dram__bytes_read.sum") + byte_count(k, "dram__bytes_write.sum") for k in kernels)
    sm, mem = _num(main, SM) or 0.0, _num(main, MEM) or 0.0
    bound, sol_text = speed_of_light(sm, mem)
    counted_flops = flops if flops else _sass_flops(kernels)
    peak_name = _peak_for(dtype, main, bool(flops))
    roof = _roofline(total_s, dram, counted_flops, peak_name, gpu)
    return {
        "bound": bound, "sol": sol_text, "sm_pct": sm, "memory_pct": mem, "seconds": total_s,
        "kernels": [str(k.get("Kernel Name", "?")) for k in kernels], **roof,
        "gpu": gpu.name, "summary": _verdict_line(bound, roof, gpu),
        "signals": _signals(main, bound, roof, spills, wgmma_serialized, bool(flops), gpu),
    }


def _sass_flops(kernels: list[dict]) -> int:
    total = 0.0
    for k in kernels:
        total += (_num(k, "sm__sass_thread_inst_executed_op_fadd_pred_on.sum") or 0)
        total += (_num(k, "sm__sass_thread_inst_executed_op_fmul_pred_on.sum") or 0)
        total += 2 * (_num(k, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum") or 0)
    return int(total)


def _peak_for(dtype: str, main: dict, matmul: bool) -> str:
    if matmul and dtype in ("bfloat16", "float16"):
        return "tensor-bf16" if dtype == "bfloat16" else "tensor-fp16"
    return "ffma"


def _roofline(seconds_: float, dram: float, flops: int, peak_name: str, gpu: Gpu) -> dict:
    if not seconds_:
        return {"bytes": dram, "flops": flops}
    peak = gpu.peaks[PEAK_MATH[peak_name]]
    intensity = flops / dram if dram else float("inf")
    ridge = peak / gpu.copy_bandwidth
    bw, fl = dram / seconds_, flops / seconds_
    binding = "memory" if intensity < ridge else "compute"
    share = bw / gpu.copy_bandwidth if binding == "memory" else fl / peak
    return {"bytes": dram, "flops": flops, "bytes_per_s": bw, "flops_per_s": fl, "intensity": intensity,
            "ridge": ridge, "peak": peak_name, "roofline_bound": binding, "share_of_peak": share}


def _verdict_line(bound: str, roof: dict, gpu: Gpu) -> str:
    if "share_of_peak" not in roof:
        return f"{bound}-bound"
    if roof["roofline_bound"] == "memory":
        where = (f"{roof['share_of_peak']:.0%} of achievable DRAM bandwidth "
                 f"({roof['bytes_per_s'] / 1e12:.2f} of {gpu.ceiling_text()})")
    else:
        where = f"{roof['share_of_peak']:.0%} of the {roof['peak']} peak ({roof['flops_per_s'] / 1e12:.1f} TFLOP/s)"
    kind = {"latency": "latency-bound", "balanced": "balanced"}.get(bound, f"{bound}-bound")
    return f"{kind} at {where}"


def _signals(k: dict, bound: str, roof: dict, spills: int, wgmma_serialized: bool, matmul: bool,
             gpu: Gpu) -> list[dict]:
    out: list[dict] = []

    def add(name: str, evidence: str) -> None:
        out.append({"name": Signal(name).value, "evidence": evidence})

    tensor = _num(k, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    if tensor is None:
        tensor = max(_find(k, r"pipe_tensor.*avg\.pct_of_peak_sustained_active$").values(), default=None)
    # A matrix product keeping its tensor pipes busy trades occupancy for register tiles by design: there,
    # register pressure and low occupancy are not findings.
    tensor_busy = matmul and (tensor or 0) >= 60
    # Likewise a memory-bound kernel at >= 90 % of the copy bandwidth: more warps cannot move bytes faster.
    at_memory_roof = roof.get("roofline_bound") == "memory" and roof.get("share_of_peak", 0) >= 0.9
    occupancy_matters = not tensor_busy and not at_memory_roof
    regs = _num(k, "launch__registers_per_thread")
    limits = _find(k, r"^launch__occupancy_limit_(registers|shared_mem|warps|blocks)$")
    achieved = _num(k, "sm__warps_active.avg.pct_of_peak_sustained_active")
    waves = _num(k, "launch__waves_per_multiprocessor")
    tightest = min(limits, key=limits.__getitem__) if limits else None
    if occupancy_matters and tightest and regs and tightest.endswith("registers") and limits[tightest] < 4:
        add("register-pressure", f"{regs:.0f} registers/thread limit occupancy to {limits[tightest]:.0f} blocks/SM")
    if spills:
        add("spills", f"ptxas: {spills} bytes spill stores")
    if waves is not None and waves < 1:
        add("under-one-wave", f"{waves:.2f} waves per SM: part of the {gpu.sms} SMs idle")
    if occupancy_matters and achieved is not None and achieved < 25:
        add("low-occupancy", f"achieved occupancy {achieved:.0f} % of peak warps")
    sectors = _num(k, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    requests = _num(k, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    if sectors and requests and sectors / requests > 16.5:
        add("uncoalesced-global", f"{sectors / requests:.1f} sectors per global load request (≤ 16 when coalesced)")
    conflicts = sum(_find(k, r"^l1tex__data_bank_conflicts_pipe_lsu_mem_shared.*\.sum$").values())
    wavefronts = sum(_find(k, r"^l1tex__data_pipe_lsu_wavefronts_mem_shared.*\.sum$").values())
    if wavefronts and conflicts / wavefronts > 0.1:
        add("smem-bank-conflicts", f"{conflicts:.0f} bank conflicts over {wavefronts:.0f} shared wavefronts")
    stalls = {re.sub(r".*stalled_(\w+?)_per_issue_active.*", r"\1", n): v
              for n, v in _find(k, r"issue_stalled_\w+_per_issue_active\.ratio$").items()}
    if stalls:
        top = max(stalls, key=stalls.__getitem__)
        if top == "long_scoreboard" and stalls[top] > 0.3 * sum(stalls.values()):
            add("long-scoreboard-stalls", f"long-scoreboard (waiting on global/local memory) is the top stall: "
                                          f"{stalls[top]:.1f} cycles per issue of {sum(stalls.values()):.1f}")
    if matmul and (tensor is None or tensor < 30):
        add("tensor-pipes-idle", f"tensor pipes active {tensor or 0:.0f} % of peak in a matrix product")
    hmma = _num(k, "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active") or 0
    gmma = _num(k, "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active")
    if matmul and gmma == 0 and hmma > 0:
        add("mma-sync-not-wgmma", f"tensor work is all mma.sync (HMMA, {hmma:.0f} % issue) and no wgmma (HGMMA): "
                                  f"the pre-Hopper path, tensor pipes {tensor or 0:.0f} % active")
    if wgmma_serialized:
        add("wgmma-serialized", "ptxas C7510: wgmma instructions are serialized")
    if roof.get("roofline_bound") == "memory" and roof.get("share_of_peak", 1) < 0.7:
        add("memory-bound-below-roofline", f"memory-bound at {roof['share_of_peak']:.0%} of {gpu.ceiling_text()}")
    if bound == "compute":
        add("compute-bound", f"SM throughput leads ({roof.get('share_of_peak', 0):.0%} of the {roof.get('peak')} peak)")
    if bound == "latency":
        add("latency-bound", "SM and memory both under 60 % of peak")
    return out
