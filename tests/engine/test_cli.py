"""`cutegen check` as a user runs it: exit codes, the file:line:col format, JSON, clear failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "corpus" / "errors" / "dynamic_owning_tensor.cu"


def cutegen(*args: str, cwd: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_check_prints_located_errors_and_fails(tmp_path):
    p = cutegen("check", str(BROKEN), cwd=tmp_path)
    assert p.returncode == 1
    lines = [l for l in p.stdout.splitlines() if ": error: " in l]
    assert len(lines) == 1
    assert lines[0].startswith(f"{BROKEN}:12:")
    assert "Dynamic owning tensors not supported" in lines[0]
    assert "Traceback" not in p.stderr


def test_check_json_is_machine_readable(tmp_path):
    p = cutegen("check", "--json", str(BROKEN), cwd=tmp_path)
    result = json.loads(p.stdout)
    assert result["ok"] is False
    assert result["diagnostics"][0]["line"] == 12
    record = json.loads(Path(result["record"]).read_text())
    assert record["schema"] == 1 and "static assertion failed" in record["result"]["raw_log"]


def test_missing_file_and_missing_nvcc_are_plain_messages(tmp_path):
    p = cutegen("check", "nope.cu", cwd=tmp_path)
    assert p.returncode == 2 and "no such file" in p.stderr and "Traceback" not in p.stderr
    p = cutegen("check", "--nvcc", "/nonexistent/nvcc", str(BROKEN), cwd=tmp_path)
    assert p.returncode == 2 and "nvcc not found" in p.stderr and "Traceback" not in p.stderr
