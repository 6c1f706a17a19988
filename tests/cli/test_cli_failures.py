"""`cutegen check` on inputs nvcc refuses: an exit code of 1 and a readable error line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }\n"


def cutegen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_arch_nvcc_dropped_is_an_error_line(tmp_path):
    (tmp_path / "scale.cu").write_text(KERNEL)
    p = cutegen("check", "--arch", "sm_70", "scale.cu", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert p.stdout.startswith("scale.cu:1:1: error: nvcc fatal: Unsupported gpu architecture 'compute_70'")


def test_unknown_arch_is_an_error_line(tmp_path):
    (tmp_path / "scale.cu").write_text(KERNEL)
    p = cutegen("check", "--arch", "sm_999", "scale.cu", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "error: nvcc fatal: Unsupported gpu architecture 'compute_999'" in p.stdout


def test_python_file_without_cuda_is_an_error_line(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nprint(torch.zeros(3))\n")
    p = cutegen("check", "train.py", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stdout.startswith("train.py:1:1: error: no CUDA to check")
