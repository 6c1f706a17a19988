"""Shared fixtures. GPU tests are marked `gpu` and skip on machines without one.

Compiles are shared across tests and across runs: every test Builder that compiles files of the
repository (the corpus, the examples, the knowledge base's snippets) keeps its cache in one persistent
folder, `$CUTEGEN_TEST_CACHE` (default ~/.cache/cutegen/test-builds; `off` = a fresh one per run). That
is safe because the build cache's key covers the file's path and text, its quoted headers, the flags and
the toolchain (nvcc, CUTLASS, arch), and the folder is named by a hash of the build engine's own code;
diagnostics are derived from the cached compiler log again on every hit, so condenser changes are tested.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
ENGINE = ROOT / "server" / "cutegen"


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (run scripts/gpu-check.sh on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def toolchain():
    from cutegen.toolchain import ToolchainError, discover

    try:
        return discover()
    except ToolchainError as e:
        pytest.skip(f"no CUDA toolchain: {e}")


def _engine_hash() -> str:
    """The code that decides what a cached compile means: how nvcc and ptxas are called (the toolchain's
    own identity, nvcc and CUTLASS versions and the arch, is in every key already)."""
    h = hashlib.sha256()
    for path in sorted((ENGINE / "build").glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


@pytest.fixture(scope="session")
def build_state(tmp_path_factory) -> Path:
    """A Builder state folder shared by the session's builders and kept between runs (see the module doc)."""
    where = os.environ.get("CUTEGEN_TEST_CACHE", str(Path.home() / ".cache" / "cutegen" / "test-builds"))
    if where == "off":
        return tmp_path_factory.mktemp("state")
    state = Path(where).expanduser() / _engine_hash()
    state.mkdir(parents=True, exist_ok=True)
    os.utime(state)  # marks it used; caches of older engine code go after a week unused (~6 MB each)
    for old in state.parent.iterdir():
        if old != state and old.is_dir() and time.time() - old.stat().st_mtime > 7 * 86400:
            shutil.rmtree(old, ignore_errors=True)
    return state


@pytest.fixture(scope="session")
def builder(toolchain, build_state):
    from cutegen.build import Builder
    from cutegen.settings import Settings

    # A check timeout of 10 minutes, not the editor's 2: on a loaded 2-core CI machine a cold check of a big
    # kernel (15_Matmul's triangle GEMM) has taken longer than 120 s. The tests of the timeout set their own.
    return Builder(toolchain, Settings(check_timeout=600), build_state)


# -- progress: one line per test folder (with -q, pytest itself prints only dots) ---------------------

class FolderProgress:
    """A pytest plugin: when the run leaves a folder, '<folder>: 12 passed, 1 skipped in 40 s'."""

    def __init__(self, reporter):
        self.reporter = reporter
        self.folder: str | None = None
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()

    def pytest_runtest_logreport(self, report) -> None:
        folder = str(Path(report.nodeid.split("::")[0]).parent)
        if folder != self.folder:
            self.flush()
            self.folder, self.counts, self.started = folder, {}, time.monotonic()
        if report.when == "call" or (report.when != "call" and not report.passed):
            outcome = "error" if report.when != "call" and report.failed else report.outcome
            self.counts[outcome] = self.counts.get(outcome, 0) + 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        self.flush()

    def flush(self) -> None:
        if self.folder is not None and self.counts:
            summary = ", ".join(f"{n} {what}" for what, n in sorted(self.counts.items()))
            self.reporter.write("\n")  # after the dots of the folder
            self.reporter.write_line(f"{self.folder}: {summary} in {time.monotonic() - self.started:.0f} s")
        self.folder = None


@pytest.hookimpl(trylast=True)  # after pytest's own terminal reporter exists
def pytest_configure(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and config.getoption("verbose") <= 0:  # -v already names every test
        config.pluginmanager.register(FolderProgress(reporter), "cutegen-folder-progress")


class CorpusCase:
    """A corpus kernel with its annotations: `// expect-root:`, `// BUG`, `// BUG-ALT`, `// cutegen-arch:`."""

    def __init__(self, path: Path):
        self.path = path
        self.text = path.read_text()
        lines = self.text.splitlines()
        self.bug_lines = {i for i, l in enumerate(lines, 1) if re.search(r"//\s*BUG\s*$", l)}
        self.alt_lines = {i for i, l in enumerate(lines, 1) if re.search(r"//\s*BUG-ALT\s*$", l)}
        self.expect_root = self._header("expect-root")
        self.expect_warning = self._header("expect-warning")
        self.arch = self._header("cutegen-arch")

    def _header(self, key: str) -> str | None:
        m = re.search(rf"^//\s*{key}:\s*(.+?)\s*$", self.text, re.M)
        return m.group(1) if m else None

    def __repr__(self):
        return self.path.stem


def corpus(kind: str) -> list[CorpusCase]:
    return [CorpusCase(p) for p in sorted((CORPUS / kind).glob("*.cu"))]


def has_nvcc() -> bool:
    return shutil.which("nvcc") is not None
