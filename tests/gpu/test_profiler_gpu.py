"""On the GPU: `cutegen profile` end to end on an example; the report is kept and classified."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.compile import Builder
from cutegen.harness.worker import Worker
from cutegen.profiler import profile_kernel
from cutegen.settings import Settings
from cutegen.toolchain import discover

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_profile_softsign_is_memory_bound_with_report(tmp_path):
    settings = Settings()
    worker = Worker()
    try:
        rec = profile_kernel(ROOT / "examples/softsign/softsign.cu", Builder(discover(settings), settings, tmp_path),
                             worker, state_dir=tmp_path)
    finally:
        worker.stop()
    assert rec.verdict == "profiled", rec.message
    assert Path(rec.profile.report).exists() and rec.profile.report.endswith(".ncu-rep")
    assert rec.profile.classification["bound"] == "memory"
    assert rec.message.startswith("memory-bound at")
