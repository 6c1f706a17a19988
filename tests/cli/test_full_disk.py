"""Nothing is lost on a full disk: a real tmpfs of a few hundred KiB, filled (tests/support/small_disk.py).

The user's kernel is either the old text or the new one, never a truncated mix; a command that cannot save its
record still prints what nvcc said; every failure is one line naming the path and the disk, never a traceback.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutegen.files import WriteError, write_atomic
from tests.agent import provider_cases as cases
from tests.support.llm import KEY, KEY_ENV
from tests.support.small_disk import fill, small_disk

ROOT = Path(__file__).resolve().parents[2]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")

# The case: a kernel just under one 4 KiB page whose fix needs a second page, so that writing it in place
# (truncate, then write) runs out of space after 4096 bytes.
FIX = cases.FIX.replace("y[i] = 0.5f * x[i];", "y[i] = 0.5f * x[i];  // halved, as the reference does")
_PAD = "// (a comment that brings the file to just under 4096 bytes)\n"
_LINES = (4086 - len(cases.BROKEN)) // len(_PAD)
_REST = 4086 - len(cases.BROKEN) - _LINES * len(_PAD)
BROKEN = cases.BROKEN.replace("#include <cutegen/abi.h>\n", "#include <cutegen/abi.h>\n" + _PAD * _LINES
                              + "/" * (_REST - 1) + "\n", 1)  # 4086 bytes
FIXED = BROKEN.replace("y[i] = HALF * x[i];", "y[i] = 0.5f * x[i];  // halved, as the reference does")

def _cutegen(cwd: Path, *args: str, **env) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), **env}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


# -- the helper ------------------------------------------------------------------------------------

def test_a_write_on_a_full_disk_leaves_the_file_as_it_was(tmp_path):
    with small_disk(tmp_path / "disk", kib=256) as disk:
        kernel = disk / "broken.cu"
        kernel.write_text(BROKEN)
        kernel.chmod(0o640)
        fill(disk)
        with pytest.raises(WriteError) as e:
            write_atomic(kernel, BROKEN + "// one more line\n" * 10)
        assert kernel.read_text() == BROKEN and kernel.stat().st_mode & 0o777 == 0o640
        message = str(e.value)
        assert str(kernel) in message and "no space left on the disk" in message
        assert f"mounted at {disk}" in message and "0 B of 256.0 KiB free" in message
        assert "broken.cu is unchanged" in message
        assert sorted(p.name for p in disk.iterdir()) == ["broken.cu", "filler.bin"]  # no temporary left behind
        with pytest.raises(WriteError, match="new.cu was not created"):
            write_atomic(disk / "new.cu", "x" * 5000)
        assert not (disk / "new.cu").exists()


def test_a_write_keeps_the_mode_follows_a_symlink_and_never_replaces_a_new_file(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o751)
    link = tmp_path / "link.sh"
    link.symlink_to(script)
    write_atomic(link, "echo new\n")
    assert link.is_symlink() and script.read_text() == "echo new\n" and script.stat().st_mode & 0o777 == 0o751
    with pytest.raises(FileExistsError):
        write_atomic(script, "never", new=True)
    assert script.read_text() == "echo new\n"
    assert write_atomic(tmp_path / "fresh.cu", "kernel", new=True).read_text() == "kernel"


# -- the CLI ---------------------------------------------------------------------------------------

@pytest.fixture
def stable_disk(build_state):
    """A small disk at the same path every run (beside the shared build cache), so that the kernel's compiles
    are cached between runs; one test at a time holds it."""
    folder = build_state / "full-disk"
    folder.mkdir(exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with small_disk(folder / "mnt", kib=512) as disk:
            yield disk, folder / "state" / ".cutegen"


@needs_nvcc
def test_fix_apply_on_a_full_disk_keeps_the_kernel_and_says_why(scripted, stable_disk):
    disk, state = stable_disk
    assert len(BROKEN) < 4096 < len(FIXED)  # written in place, the fix would stop at 4096 bytes
    (disk / ".git").mkdir()
    (disk / "halve.py").write_text(cases.PROBLEM)
    kernel = disk / "broken.cu"
    kernel.write_text(BROKEN)
    fill(disk)
    server = scripted([{"match": "TASK: diagnose", "reply": cases.DIAGNOSIS}, {"match": "TASK: patch", "reply": FIX}])
    p = _cutegen(disk, "fix", "broken.cu", "--apply", "--llm-base-url", server.url, "--llm-model", "scripted",
                 "--llm-api-key-env", KEY_ENV, "--llm-retries", "1", "--state-dir", str(state), **{KEY_ENV: KEY})
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 1, p.stdout + p.stderr
    assert "+  if (i < n) y[i] = 0.5f * x[i];  // halved" in p.stdout  # the verified diff was shown
    assert kernel.read_text() == BROKEN  # byte for byte: neither truncated nor half-patched
    said = " ".join(p.stderr.split())
    assert f"not applied: cannot write {kernel}: no space left on the disk (the disk mounted at {disk}" in said
    assert "broken.cu is unchanged" in said


@needs_nvcc
def test_check_with_cutegen_on_a_full_disk_prints_the_diagnostics_and_one_line(tmp_path):
    with small_disk(tmp_path / "disk", kib=512) as disk:
        (disk / ".git").mkdir()
        kernel = disk / "broken.cu"
        kernel.write_text(cases.BROKEN)
        fill(disk)
        p = _cutegen(disk, "check", "broken.cu")
        assert "Traceback" not in p.stderr, p.stderr
        assert p.returncode == 1, p.stderr
        assert p.stdout.startswith('broken.cu:6:') and 'identifier "HALF" is undefined' in p.stdout
        (line,) = [line for line in p.stderr.splitlines() if "not saved" in line]
        assert "1 error(s)" in line and f"cannot write {disk}/.cutegen/runs/" in line
        assert "no space left on the disk" in line
        assert kernel.read_text() == cases.BROKEN


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@needs_nvcc
def test_test_with_cutegen_on_a_full_disk_prints_the_verdict_and_one_line(tmp_path):
    """Here the kernel is built, not run; on a GPU it passes (scripts/gpu-check.sh edges): either way the verdict is
    printed and one line says that its record was not saved."""
    with small_disk(tmp_path / "disk", kib=512) as disk:
        (disk / ".git").mkdir()
        (disk / "halve.py").write_text(cases.PROBLEM)
        (disk / "good.cu").write_text(cases.GOOD)
        fill(disk)
        p = _cutegen(disk, "test", "good.cu")
        assert "Traceback" not in p.stderr, p.stderr
        verdict = "pass" if _has_gpu() else "not-run"
        assert p.stdout.startswith(f"good.cu: {verdict}"), p.stdout + p.stderr
        (line,) = [line for line in p.stderr.splitlines() if "not saved" in line]
        assert line.startswith(f"{verdict} · the run record was not saved: cannot write {disk}/.cutegen/runs/")
        assert "no space left on the disk" in line
