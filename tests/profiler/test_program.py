"""`cutegen profile -- CMD` and `cutegen sanitize -- CMD` on a user's own program, as a user without a GPU meets
them: a plain message, never a traceback. (On the GPU: test_program_gpu.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}


def cutegen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, capture_output=True, text=True, env=ENV,
                          timeout=120)


def test_profile_without_a_file_or_program_says_what_to_give(tmp_path):
    done = cutegen("profile", "--lines", cwd=tmp_path)
    assert done.returncode == 2
    assert "a program after --" in done.stdout + done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(shutil.which("ncu") is not None or Path("/usr/local/cuda/bin/ncu").exists(),
                    reason="ncu is installed here")
def test_profiling_a_program_without_nsight_compute_names_it(tmp_path):
    done = cutegen("profile", "--lines", "--state-dir", str(tmp_path / "state"), "--", "true", "--size", "4096",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Nsight Compute (ncu) was not found" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_after_the_separator_is_the_programs_own(tmp_path):
    """Options after -- belong to the program (`--size` is not cutegen's)."""
    from cutegen.profiler.program import ncu_command

    argv = ncu_command("ncu", ["./bench", "--size", "4096"], tmp_path / "r.ncu-rep", "gemm", 3)
    assert argv[-3:] == ["./bench", "--size", "4096"]
    assert argv[argv.index("-k") + 1] == "regex:gemm" and argv[argv.index("-c") + 1] == "3"
