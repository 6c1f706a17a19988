"""The escape suite again, with the server running as an unprivileged user (nobody), where this machine allows it:
the jail must hold for a non-root server too (a user namespace it may make itself, RLIMIT_NPROC for forks, no
memory cgroup: the memory tests then skip and say why). Root is needed to switch users; the Python and the
packages must be readable by nobody (a Python under /root is not, and then this skips)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOBODY = ["--reuid", "65534", "--regid", "65534", "--clear-groups"]


def _as_nobody(argv: list[str], cwd: Path, home: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HOME", "TMPDIR")}
    # The copy's server first; other entries (the GPU machine's unpacked wheels) stay, this checkout's go.
    others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and not p.startswith(str(ROOT))]
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(cwd / "server"), *others]), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([shutil.which("setpriv"), *NOBODY, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def tree():
    """A copy of the server and the sandbox tests that nobody can read, in a folder nobody can enter."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("switching to an unprivileged user needs root and setpriv (util-linux)")
    top = Path(tempfile.mkdtemp(prefix="cutegen-nobody-"))
    try:
        shutil.copytree(ROOT / "server", top / "server", ignore=shutil.ignore_patterns("__pycache__"))
        (top / "tests" / "sandbox").mkdir(parents=True)
        for name in ("__init__.py", "conftest.py"):
            shutil.copy(ROOT / "tests" / name, top / "tests" / name)
        for path in (ROOT / "tests" / "sandbox").glob("*.py"):
            shutil.copy(path, top / "tests" / "sandbox" / path.name)
        shutil.copy(ROOT / "pyproject.toml", top / "pyproject.toml")
        (top / "home").mkdir()
        os.chown(top / "home", 65534, 65534)
        for folder, _, files in os.walk(top):
            os.chmod(folder, 0o755)
            for f in files:
                os.chmod(Path(folder) / f, 0o644)
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_escape_suite_holds_for_an_unprivileged_server(tree):
    probe = _as_nobody([sys.executable, "-c", "import os, sys; print('EXEC', os.access(sys.executable, os.X_OK)); "
                        "from cutegen.sandbox import availability; a = availability(); print('SANDBOX', a.ok, a.reason)"],
                       tree, tree / "home", 120)
    if "EXEC True" not in probe.stdout:  # the jail's launcher and worker start this Python again, as nobody
        pytest.skip(f"nobody cannot run this Python ({sys.executable}): {(probe.stdout + probe.stderr).strip()[-300:]}")
    if "SANDBOX True" not in probe.stdout:
        pytest.skip(f"no sandbox for an unprivileged user here: {probe.stdout.strip()}")
    run = _as_nobody([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/sandbox/test_escapes.py",
                      "tests/sandbox/test_escapes_host.py"], tree, tree / "home", 900)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-500:]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary, summary
    print(f"as nobody: {summary}")
