"""`profile_kernel`: Nsight Compute on one verified call of a kernel (or of its PyTorch reference), the report
kept in the run record so it opens in the Nsight Compute GUI, and the classification read from it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from cutegen import hardware, records
from cutegen.compile import Builder, Tier
from cutegen.cancel import Cancel, Cancelled
from cutegen.files import write_atomic
from cutegen.harness.problem import load_problem
from cutegen.pairing import find_problem
from cutegen.profiler.classify import summarize
from cutegen.profiler.lines import profile_lines
from cutegen.profiler.ncu_csv import byte_count, parse_raw_csv, seconds
from cutegen.profiler.signals import NVTX_RANGE as RANGE
from cutegen.profiler.signals import ProfileVerdict as V
from cutegen.records import RunKind
from cutegen.state import IN_WORKING_FOLDER, StateDir
from cutegen.toolchain import local_gpu_arch

SECTIONS = ["SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis",
            "ComputeWorkloadAnalysis", "SchedulerStats"]
# The per-line profile rides in the same ncu run: per-PC warp-state samples, executed instructions and memory
# sectors, with the kernel's source imported into the report (so the GUI shows it on any machine).
LINE_SECTIONS = ["SourceCounters"]
LINE_ARGS = ["--import-source", "yes"]
METRICS = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "launch__waves_per_multiprocessor",
    "launch__registers_per_thread",
]
PERMISSION_HELP = (
    "the GPU's performance counters are restricted to admin users (ERR_NVGPUCTRPERM). Run as root, or allow "
    "them: `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/ncu.conf` and "
    "reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM). Showing timing only."
)


def find_ncu(setting: str | None, cuda_root: str) -> str | None:
    if setting:
        return setting if Path(setting).is_file() else None
    return shutil.which("ncu") or next((str(p) for p in [Path(cuda_root) / "bin" / "ncu"] if p.is_file()), None)


def profile_kernel(kernel: Path, builder: Builder, worker=None, *, problem: str | Path | None = None,
                   state_dir: Path = IN_WORKING_FOLDER, reference: bool = False,
                   on_stage: Callable[[str], None] | None = None, jail=None, lines: bool = True,
                   cancel: Cancel | None = None) -> records.RunRecord:
    """`jail` (a cutegen.sandbox.Jail): run ncu and the profiled program inside it (a model-written candidate).
    `lines`: also the per-line profile (profiler/lines.py), from the same ncu run. `cancel`: another thread may
    kill ncu (and the build); the profile then raises Cancelled and records nothing. Returns the stored record
    (its `profile` the classification with each signal's evidence, its `lines` the per-line profile)."""
    kernel = Path(kernel).resolve()
    cancel = cancel or Cancel()
    stage = on_stage or (lambda s: None)
    record: dict = {"kernel": str(kernel), "reference": reference}

    finish = records.Recorder(state_dir, RunKind.PROFILE, str(kernel), record).finish

    problem_path = find_problem(kernel, problem)
    if problem_path is None or not problem_path.is_file():
        return finish(V.NO_PROBLEM, f"no problem paired with {kernel.name}")
    record["problem"] = str(problem_path)
    ncu = find_ncu(builder.settings.ncu, builder.toolchain.cuda_root)
    if ncu is None and local_gpu_arch() is not None:  # without a GPU, that is the news (below), not ncu
        return finish(V.NCU_MISSING, "Nsight Compute (ncu) was not found: install it with the CUDA toolkit, put it on "
                                     f"PATH or set {builder.settings.name_of('ncu')}")
    lines = lines and not reference  # the reference is PyTorch's code: it has no lines of the user's
    spills, serialized, target = 0, False, ["--reference"]
    library: str | None = None
    if not reference:
        stage("build")
        build = builder.run(Tier.BUILD, kernel)
        if build.cancelled:
            raise Cancelled("the build was stopped")
        if not build.ok or build.artifact is None:  # an ok build has its library: nvcc exited 0 and wrote it
            return finish(V.BUILD_FAILED, "the kernel does not build; fix its errors first")
        spills = sum(k.spill_stores for k in build.resources)
        serialized = "C7510" in build.raw_log
        library = build.artifact
        target = ["--library", library]
    if local_gpu_arch() is None:
        return finish(V.NOT_RUN, "no NVIDIA GPU on this machine: nothing to profile")
    assert ncu is not None  # there is a GPU, so a missing ncu stopped the run above (NCU_MISSING)

    folder = StateDir(state_dir).profile_folder(kernel)
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / ("reference.ncu-rep" if reference else "kernel.ncu-rep")
    stage("ncu")
    started = time.perf_counter()
    if jail is not None:
        # ncu, the problem and the library (with its compiled source) read-only; only the report folder writable
        jail = jail.with_paths(readonly=[os.path.dirname(os.path.realpath(ncu)), problem_path, *target[1:],
                                         *([os.path.dirname(target[1])] if lines else [])],
                               writable=[folder])
    outcome = _run_ncu(ncu, report, problem_path, target, builder.settings.profile_timeout,
                       builder.settings.name_of("profile_timeout"), jail, lines, cancel)
    record["stage_seconds"] = {"ncu": round(time.perf_counter() - started, 2)}
    if outcome is not None:
        verdict, message = outcome
        if verdict is V.NO_COUNTER_PERMISSION and worker is not None:
            from cutegen.harness.run import verify_kernel

            timed = verify_kernel(kernel, builder, worker, problem=problem, timing=True, state_dir=state_dir)
            return finish(verdict, message, timing=timed.timing.to_json() if timed.timing else None,
                          throughput=asdict(timed.throughput) if timed.throughput else None)
        return finish(verdict, message)
    stage("read report")
    started = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:  # two independent `ncu --import` processes
        raw, details = pool.map(lambda page: _export(ncu, report, page, page == "raw", cancel), ["raw", "details"])
    record["stage_seconds"]["export"] = round(time.perf_counter() - started, 2)
    write_atomic(folder / "raw.csv", raw)
    write_atomic(folder / "details.txt", details)
    kernels = parse_raw_csv(raw)
    if not kernels:
        return finish(V.KERNEL_NOT_FOUND, "ncu profiled no kernel inside the call (does cutegen_forward launch any?)")
    loaded = load_problem(problem_path)
    dtype = _output_dtype(loaded)
    gpu = hardware.present() or hardware.H200  # a card not in the table is read against the one measured here
    result = summarize(kernels, gpu=gpu, flops=loaded.flops(), dtype=dtype, spills=spills, wgmma_serialized=serialized)
    if lines and library is not None:  # (lines are never asked of the reference, which has no library)
        stage("lines")
        started = time.perf_counter()
        try:
            record["lines"], problem = profile_lines(report, ncu, library, kernel, builder.toolchain,
                                                     jail.command if jail is not None else None)
        except Exception as e:  # the kernel-level profile stands without its lines
            record["lines"], problem = None, f"the per-line profile failed ({type(e).__name__}: {e})"
        record["stage_seconds"]["lines"] = round(time.perf_counter() - started, 2)
        if problem:
            record["lines_problem"] = problem
    return finish(V.PROFILED, result["summary"], report=str(report), classification=result,
                  signals=result.pop("signals"), ncu_rule=ncu_sol_rule(details), metrics=curated(kernels))


def _run_ncu(ncu: str, report: Path, problem: Path, target: list[str], timeout: float,
             timeout_name: str, jail=None, lines: bool = False, cancel: Cancel | None = None) -> tuple[V, str] | None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    wrap = jail.command if jail is not None else (lambda argv: argv)
    base = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", f"{RANGE}/",
            "-f", "-o", str(report.with_suffix(""))]
    sections = [a for s in SECTIONS + LINE_SECTIONS * lines for a in ("--section", s)] + LINE_ARGS * lines
    program = [sys.executable, "-m", "cutegen.profiler.driver", "--problem", str(problem), *target]
    for extra in (["--metrics", ",".join(METRICS)], []):  # retry with sections only if a metric is unknown
        try:
            proc = (cancel or Cancel()).run(wrap([*base, *sections, *extra, *program]), timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return V.NCU_TIMEOUT, f"ncu did not finish within {timeout:.0f} s (setting {timeout_name})"
        out = proc.stdout + proc.stderr
        if "ERR_NVGPUCTRPERM" in out:
            return V.NO_COUNTER_PERMISSION, PERMISSION_HELP
        if "No kernels were profiled" in out:
            return V.KERNEL_NOT_FOUND, "ncu saw no kernel inside the profiled call (NVTX range cutegen_profile)"
        if report.exists() and proc.returncode == 0:
            return None
        if not extra or "metric" not in out.lower():
            break
    tail = "\n".join(out.strip().splitlines()[-6:])
    return V.NCU_FAILED, f"ncu failed (exit {proc.returncode}): {tail}"


def _export(ncu: str, report: Path, page: str, csv: bool, cancel: Cancel | None = None) -> str:
    cmd = [ncu, "--import", str(report), "--page", page] + (["--csv"] if csv else [])
    return (cancel or Cancel()).run(cmd, timeout=120).stdout


def ncu_sol_rule(details: str) -> str | None:
    """Nsight Compute's own SpeedOfLight rule outcome, read from its rule text, for comparison."""
    text = " ".join(details.split())
    if "latency issues" in text:
        return "latency"
    if "grid is too small to fill the available resources" in text:
        return "latency"  # the rule's finding for an under-filled device: idle SMs, no unit near its peak
    if "Memory is more heavily utilized than Compute" in text:
        return "memory"
    if "Compute is more heavily utilized than Memory" in text:
        return "compute"
    if "greater than 80.0% of the available compute or memory" in text:
        return "high-throughput"
    if "balanced" in text:
        return "balanced"
    return None


def _output_dtype(problem) -> str:
    import torch

    torch.manual_seed(0)
    with torch.device("meta"):
        try:
            out = problem.make_model()(*problem.make_inputs())
        except Exception:
            return "float32"
    out = out[0] if isinstance(out, (tuple, list)) else out
    return str(out.dtype).removeprefix("torch.")


CURATED = {
    "time_ns": "gpu__time_duration.sum", "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_pct": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1_pct": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "dram_read_bytes": "dram__bytes_read.sum", "dram_write_bytes": "dram__bytes_write.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "registers_per_thread": "launch__registers_per_thread", "waves_per_sm": "launch__waves_per_multiprocessor",
    "issue_active_pct": "sm__inst_issued.avg.pct_of_peak_sustained_active",
    "ffma": "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "grid_size": "launch__grid_size", "block_size": "launch__block_size",
}


def curated(kernels: list[dict]) -> list[dict]:
    out = []
    for k in kernels:
        row = {"kernel": k.get("Kernel Name")}
        for key, metric in CURATED.items():
            row[key] = k.get(metric)
        # ncu prints each metric in its own unit (ms, Gbyte): the record holds base units, as its names say.
        time_s = seconds(k)
        row["time_ns"] = time_s * 1e9 if time_s is not None else None
        for key in ("dram_read_bytes", "dram_write_bytes"):
            if isinstance(row[key], (int, float)):
                row[key] = byte_count(k, CURATED[key])
        row["occupancy_limits"] = {n.removeprefix("launch__occupancy_limit_"): v for n, v in k.items()
                                   if n.startswith("launch__occupancy_limit_")}
        row["stalls"] = {n.split("stalled_")[1].split("_per_issue")[0]: v for n, v in k.items()
                         if "issue_stalled_" in n and n.endswith("per_issue_active.ratio")
                         and isinstance(v, (int, float))}
        row["tensor_pipe_pct"] = max((v for n, v in k.items() if "pipe_tensor" in n and "pct_of_peak" in n
                                      and isinstance(v, (int, float))), default=None)
        out.append(row)
    return out
