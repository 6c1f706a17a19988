"""The candidate as the host compiler's preprocessor sees it, for the gate: the exact host preprocessing step an
nvcc build runs (`nvcc --dryrun` names it: `gcc -E -x c++ -D__CUDACC__ ... -include cuda_runtime.h FILE -o
FILE.cpp4.ii`, the build's own flags, no `__CUDA_ARCH__`), run in the candidate's compile jail where there is
one; its output read for the candidate's own tokens (`cpp.main_file`) and then deleted (it is megabytes).

Not `nvcc -E`: that preprocesses for the device (it defines `__CUDA_ARCH__`), so host code behind
`#ifndef __CUDA_ARCH__` would not be in it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from cutegen.sandbox import cpp


@dataclass
class HostView:
    """The preprocessor's view of a candidate's host side (what the static gate reads), or why there is none."""

    preprocessed: cpp.Preprocessed | None
    error: str = ""  # why there is no view: the preprocessor's first error, or nvcc's plan not found
    seconds: float = 0.0


def host_view(nvcc_build: list[str], source: Path, jail=None, timeout: float = 120.0) -> HostView:
    """`nvcc_build`: nvcc and the flags of the build (the BUILD tier's: the host side exists only there);
    `source`: the candidate's file."""
    started = time.perf_counter()
    out = source.with_suffix(".host.ii")
    argv = host_command(nvcc_build, source, out)
    if argv is None:
        return HostView(None, "nvcc --dryrun names no host preprocessing step", time.perf_counter() - started)
    if jail is not None:
        argv = jail.compile_command(argv)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        _remove(out)
        return HostView(None, f"the preprocessor did not finish within {timeout:.0f} s", time.perf_counter() - started)
    try:
        if proc.returncode != 0 or not out.is_file():
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            first = next((ln for ln in lines if "error" in ln), lines[0] if lines else f"exit code {proc.returncode}")
            return HostView(None, first.replace(str(source), source.name)[:300], time.perf_counter() - started)
        return HostView(cpp.main_file(out.read_text(errors="replace")), "", time.perf_counter() - started)
    finally:
        _remove(out)


def host_command(nvcc_build: list[str], source: Path, out: Path) -> list[str] | None:
    """The host preprocessing command of `nvcc_build` on `source`, writing `out`. `--dryrun` runs nothing and
    reads no input: it prints the steps (`#$ ` lines) nvcc would run."""
    plan = subprocess.run([*nvcc_build, "--dryrun", str(source), "-o", str(out.with_suffix(".so"))],
                          capture_output=True, text=True, timeout=60)
    for line in (plan.stderr + plan.stdout).splitlines():
        if line.startswith("#$ ") and " -E " in line and ".cpp4.ii" in line:
            argv = shlex.split(line[3:])
            if "-o" not in argv[:-1]:
                return None
            argv[argv.index("-o") + 1] = str(out)
            argv[0] = shutil.which(argv[0]) or argv[0]  # the host compiler by name: the jail binds its folder
            return argv
    return None


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
