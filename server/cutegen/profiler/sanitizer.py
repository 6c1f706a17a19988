"""compute-sanitizer as a verdict and diagnostics: memcheck, racecheck (shared-memory hazards), initcheck and
synccheck, each on one call of the kernel with the problem's inputs (the profiler's driver, so the same
inputs Nsight Compute sees), condensed like compile errors.

The sanitizer prints `at kernel(...)+0xc8 in FILE:LINE` for every report of every thread; sanitizer_output.py
makes the same error at the same user line one finding with a count, the first threads, blocks and addresses kept
as evidence.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cutegen.profiler.line_table import FunctionLines
from cutegen.profiler.lines import Folder
from cutegen.profiler.sanitizer_output import condense, diagnostics, parse
from cutegen.state import IN_WORKING_FOLDER

if TYPE_CHECKING:
    from cutegen.records import RunRecord

__all__ = ["TOOLS", "condense", "diagnostics", "parse", "sanitize_kernel", "suggestion"]

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
# racecheck's hazard report (the form captured on the H200): one block per hazardous byte, thousands for one
# missing barrier, so the print limit keeps the first PRINT_LIMIT; condense() folds them into one finding per line.
TOOL_ARGS = {"memcheck": ["--leak-check", "no"], "racecheck": ["--racecheck-report", "hazard"], "initcheck": [],
             "synccheck": []}
PRINT_LIMIT = 200
MISSING = ("compute-sanitizer was not found: it ships with the CUDA toolkit (bin/compute-sanitizer or "
           "compute-sanitizer/compute-sanitizer under the toolkit); put it on PATH")
# Which harness verdicts a sanitizer run explains (the GPU reported a fault the test cannot place).
SUGGEST_FOR = ("cuda-error", "launch-error", "crashed")


def suggestion(verdict: str, message: str = "") -> str | None:
    """The hint a failing test gets: where to look next."""
    if verdict in SUGGEST_FOR or "illegal" in message.lower():
        return "run the sanitizer (cutegen sanitize, or CuTeGen: Sanitize) to find the line that faults"
    return None


def find_sanitizer(cuda_root: str) -> str | None:
    root = Path(cuda_root)
    for candidate in (root / "bin" / "compute-sanitizer", root / "compute-sanitizer" / "compute-sanitizer"):
        if candidate.is_file():
            return str(candidate)
    return shutil.which("compute-sanitizer")


def command(sanitizer: str, tool: str, problem: Path, library: str) -> list[str]:
    program = [sys.executable, "-m", "cutegen.profiler.driver", "--problem", str(problem), "--library", library,
               "--warmup", "0", "--calls", "1", "--no-reference"]
    return [sanitizer, "--tool", tool, "--print-limit", str(PRINT_LIMIT), "--show-backtrace", "device",
            *TOOL_ARGS[tool], *program]


def run_tool(argv: list[str], timeout: float, wrap=None) -> tuple[str, str | None]:
    """(the sanitizer's output, None) or (output so far, why it did not finish)."""
    # Without PyTorch's caching allocator every tensor is its own cudaMalloc, so memcheck and initcheck see
    # each tensor's true bounds (a caching block is 2 MB: a store just past a small tensor lands inside it).
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run(wrap(argv) if wrap else argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return out, f"did not finish within {timeout:.0f} s"
    out = proc.stdout + proc.stderr
    if "COMPUTE-SANITIZER" not in out:
        return out, f"failed (exit {proc.returncode}): {out.strip()[-300:]}"
    return out, None


# -- the run ----------------------------------------------------------------------------------------


def sanitize_kernel(kernel: Path, builder, *, problem: str | Path | None = None, state_dir: Path = IN_WORKING_FOLDER,
                    tools: tuple[str, ...] = TOOLS, on_stage: Callable[[str], None] | None = None,
                    jail=None) -> "RunRecord":
    """Build `kernel` (-lineinfo), run each sanitizer tool on one call, and write the run record (returned, typed)."""
    from cutegen import records
    from cutegen.compile import Tier
    from cutegen.pairing import find_problem
    from cutegen.profiler.line_table import LineTableError, find_tool, read_line_table
    from cutegen.profiler.lines import digest_file, system_folders
    from cutegen.profiler.signals import SanitizeVerdict as V
    from cutegen.toolchain import local_gpu_arch

    kernel = Path(kernel).resolve()
    stage = on_stage or (lambda s: None)
    record: dict = {"kernel": str(kernel)}
    finish = records.Recorder(state_dir, "sanitize", str(kernel), record).finish
    problem_path = find_problem(kernel, problem)
    if problem_path is None or not problem_path.is_file():
        return finish(V.NO_PROBLEM, f"no problem paired with {kernel.name}: the sanitizer needs its inputs")
    sanitizer = find_sanitizer(builder.toolchain.cuda_root)
    if sanitizer is None:
        return finish(V.SANITIZER_MISSING, MISSING)
    stage("build")
    build = builder.run(Tier.BUILD, kernel)
    if not build.ok:
        return finish(V.BUILD_FAILED, "the kernel does not build; fix its errors first")
    if local_gpu_arch() is None:
        return finish(V.NOT_RUN, "no NVIDIA GPU on this machine: nothing to sanitize")
    if jail is not None:
        jail = jail.with_paths(readonly=[os.path.dirname(os.path.realpath(sanitizer)), problem_path, build.artifact,
                                         os.path.dirname(build.artifact)])
    bins = [Path(builder.toolchain.cuda_root) / "bin", Path(builder.toolchain.nvcc).parent]
    tables: dict[str, FunctionLines] = {}
    if (nvdisasm := find_tool("nvdisasm", bins)) is not None:
        try:
            tables = read_line_table(Path(build.artifact), nvdisasm, find_tool("cuobjdump", bins))
        except LineTableError:
            pass  # the sanitizer's own frames still place most errors
    copy = str(Path(build.artifact).parent / (kernel.name if kernel.suffix != ".py" else kernel.stem + ".cu"))
    folder = Folder({copy: str(kernel), os.path.realpath(copy): str(kernel)}, system_folders(builder.toolchain))
    reports, counts, failures, outputs = [], {}, [], {}
    timeout = builder.settings.profile_timeout
    for tool in tools:
        stage(tool)
        out, problem_text = run_tool(command(sanitizer, tool, problem_path, build.artifact), timeout,
                                     jail.command if jail is not None else None)
        outputs[tool] = out[-20000:]
        found, errors = parse(out, tool)
        reports += found
        counts[tool] = errors or len(found)
        if problem_text:
            failures.append(f"{tool} {problem_text}")
    findings, unplaced = condense(reports, folder, tables)
    report = {"findings": findings, "tools": counts, "unplaced": unplaced,
              "digests": {f: digest_file(f) for f in sorted({x["file"] for x in findings} | {str(kernel)})}}
    extra = {"sanitizer": report, "diagnostics": diagnostics(findings), "outputs": outputs}
    if failures and not findings:
        verdict = V.TIMEOUT if all("did not finish" in f for f in failures) else V.FAILED
        return finish(verdict, "compute-sanitizer " + "; ".join(failures), **extra)
    errors = sum(counts.values())
    first = "; ".join(f"{f['tool']} at line {f['line']}: {f['message']}" for f in findings[:3])
    message = ((f"{errors} error(s): {first}" if errors else f"no errors from {', '.join(tools)}")
               + (f" ({'; '.join(failures)})" if failures else ""))
    return finish(V.ERRORS if errors else V.CLEAN, message, **extra)
