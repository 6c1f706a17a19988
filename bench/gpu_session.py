"""What the GPU benchmarks share: the examples with a paired problem, and one builder + worker + state dir."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cutegen.compile import Builder
from cutegen.harness.worker import Worker
from cutegen.settings import Settings
from cutegen.toolchain import discover

ROOT = Path(__file__).resolve().parent.parent


def example_kernels(only: list[str] | None = None) -> list[Path]:
    kernels = sorted(p for p in (ROOT / "examples").glob("*/*.cu") if p.with_suffix(".py").exists())
    return [k for k in kernels if k.stem in only] if only else kernels


def engine(test_timeout: float = 300) -> tuple[Builder, Worker, Path]:
    """A fresh state dir per process, or $CUTEGEN_BENCH_STATE: several benchmarks of one device call then share
    their builds (the CUTLASS GEMMs take minutes each), e.g. built while another benchmark uses the GPU."""
    settings = Settings(test_timeout=test_timeout)
    shared = os.environ.get("CUTEGEN_BENCH_STATE")
    state = Path(shared) if shared else Path(tempfile.mkdtemp())
    state.mkdir(parents=True, exist_ok=True)
    return Builder(discover(settings), settings, state), Worker(), state
