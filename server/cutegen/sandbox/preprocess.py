"""The candidate as the real preprocessor sees it, for the gate: `nvcc -E` with the build's flags (so the same
macros, includes and `#if` branches as the host compile), run in the candidate's compile jail where there is
one, its output read for the candidate's own tokens (`cpp.main_file`) and then deleted (it is megabytes).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from cutegen.sandbox import cpp


@dataclass
class Outcome:
    preprocessed: cpp.Preprocessed | None
    error: str = ""  # the preprocessor's own first error line when it failed
    seconds: float = 0.0


def host_view(nvcc_flags: list[str], source: Path, jail=None, timeout: float = 120.0) -> Outcome:
    """`nvcc_flags`: nvcc and the build's flags without an output mode; `source`: the candidate's file."""
    out = source.with_suffix(".host.ii")
    argv = [*nvcc_flags, "-E", str(source), "-o", str(out)]
    if jail is not None:
        argv = jail.compile_command(argv)
    started = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        _remove(out)
        return Outcome(None, f"the preprocessor did not finish within {timeout:.0f} s", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    try:
        if proc.returncode != 0 or not out.is_file():
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            first = next((ln for ln in lines if "error" in ln), lines[0] if lines else f"exit code {proc.returncode}")
            return Outcome(None, first.replace(str(source), source.name)[:300], seconds)
        return Outcome(cpp.main_file(out.read_text(errors="replace")), "", seconds)
    finally:
        _remove(out)


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
