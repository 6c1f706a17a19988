"""The first ten minutes at a terminal: what a newcomer's first commands print at their edges (no GPU, an empty
file, a line past the end, a file with errors, the current folder `/`). Each message says what is true here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutegen.diagnostics import condense, parse_log
from tests.support.paths import CORPUS

ROOT = Path(__file__).resolve().parents[2]
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _cutegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


@needs_nvcc
@pytest.mark.skipif(_has_gpu(), reason="what a machine without a GPU says")
def test_profile_and_test_without_a_gpu_say_no_gpu_with_the_path_as_check_prints_it(build_state):
    p = _cutegen("profile", "examples/softsign/softsign.cu", "--ncu", "/nonexistent/ncu", "--state-dir", str(build_state))
    assert p.returncode == 1, p.stderr
    assert "ncu" not in p.stdout.split(":", 2)[1] and "no NVIDIA GPU on this machine" in p.stdout, p.stdout
    assert p.stdout.startswith("examples/softsign/softsign.cu: not-run")
    t = _cutegen("test", "examples/softsign/softsign.cu", "--state-dir", str(build_state))
    assert t.stdout.startswith("examples/softsign/softsign.cu: not-run"), t.stdout  # relative, as check prints it
    assert f"run record {build_state}/runs/softsign-" in t.stderr  # outside the current folder: absolute


def test_verbose_check_says_how_many_of_the_errors_it_lists():
    log = (CORPUS / "logs" / "copy_rank_mismatch.log").read_text()
    case = CORPUS / "errors" / "copy_rank_mismatch.cu"
    lines = case.read_text().splitlines()
    (first, *_) = condense(parse_log(log), "tests/corpus/errors/copy_rank_mismatch.cu",
                           lambda f: not f.startswith("$CUTLASS_INCLUDE"), lambda f: lines)
    said = first.explanation
    assert "8 more error(s) on this line follow from the same cause (the first 5; all of them in the raw log):" in said
    assert said.count("\n\n- static assertion failed") == 5


def test_layout_past_the_end_of_the_file_says_so_without_compiling(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text("// one\n" * 99)
    p = _cutegen("layout", f"{kernel}:9999", "--nvcc", "/nonexistent/nvcc")  # no compiler is even looked for
    assert p.returncode == 2
    assert p.stderr.strip() == f"error: {kernel} has 99 lines: there is no line 9999 (lines count from 1)"
    p = _cutegen("layout", f"{kernel}:0", "--nvcc", "/nonexistent/nvcc")
    assert "there is no line 0" in p.stderr


@needs_nvcc
def test_an_empty_file_is_ok_with_a_note_and_paths_keep_their_slash_from_the_root(tmp_path):
    empty = tmp_path / "empty.cu"
    empty.write_text("\n")
    p = _cutegen("check", str(empty), "--state-dir", str(tmp_path / "state"), cwd=Path("/"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"{empty}:1:1: warning: empty.cu is empty: there is no kernel to check"]
    assert p.stderr.startswith("ok ·") and f"raw log in {tmp_path}/state/runs/" in p.stderr


@needs_nvcc
def test_layout_on_a_file_with_errors_names_the_users_line_not_a_headers(build_state):
    case = "tests/corpus/errors/copy_rank_mismatch.cu"
    p = _cutegen("layout", f"{case}:19", "--state-dir", str(build_state))
    (note,) = [line for line in p.stderr.splitlines() if line.startswith("note:")]
    assert note.startswith("note: the file has errors (first at line 20: "), note
    assert "`cutegen check` shows them all" in note


@pytest.mark.gpu
@needs_nvcc
def test_profile_on_a_gpu_without_ncu_names_nsight_compute(build_state):
    """The other side of 'no GPU': where there is one, a missing ncu is the news."""
    p = _cutegen("profile", "examples/softsign/softsign.cu", "--ncu", "/nonexistent/ncu", "--state-dir", str(build_state))
    assert p.returncode == 1 and p.stdout.startswith("examples/softsign/softsign.cu: ncu-missing"), p.stdout + p.stderr
    assert "Nsight Compute (ncu) was not found" in p.stdout
