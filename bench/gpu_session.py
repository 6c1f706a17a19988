"""What the GPU benchmarks share: the examples with a paired problem, and one builder + worker + state dir."""

from __future__ import annotations

import tempfile
from pathlib import Path

from cutegen.build import Builder
from cutegen.harness.worker import Worker
from cutegen.settings import Settings
from cutegen.toolchain import discover

ROOT = Path(__file__).resolve().parent.parent


def example_kernels(only: list[str] | None = None) -> list[Path]:
    kernels = sorted(p for p in (ROOT / "examples").glob("*/*.cu") if p.with_suffix(".py").exists())
    return [k for k in kernels if k.stem in only] if only else kernels


def engine(test_timeout: float = 300) -> tuple[Builder, Worker, Path]:
    settings = Settings(test_timeout=test_timeout)
    state = Path(tempfile.mkdtemp())
    return Builder(discover(settings), settings, state), Worker(), state
