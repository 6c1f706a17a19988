"""Shared fixtures. GPU tests are marked `gpu` and skip on machines without one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


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


@pytest.fixture(scope="session")
def builder(toolchain, tmp_path_factory):
    from cutegen.build import Builder
    from cutegen.settings import Settings

    return Builder(toolchain, Settings(), tmp_path_factory.mktemp("state"))


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
