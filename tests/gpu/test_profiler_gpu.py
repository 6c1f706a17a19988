"""On the GPU: `cutegen profile` end to end on an example; the report is kept and classified."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.profiler import profile_kernel

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_profile_softsign_is_memory_bound_with_report(make_session, tmp_path):
    kernel = ROOT / "examples/softsign/softsign.cu"
    session = make_session(state_dir=tmp_path)  # as `cutegen profile --state-dir` builds it
    rec = profile_kernel(kernel, session.builder(kernel), session.worker(), state_dir=tmp_path)
    assert rec.verdict == "profiled", rec.message
    assert Path(rec.profile.report).exists() and rec.profile.report.endswith(".ncu-rep")
    assert rec.profile.classification["bound"] == "memory"
    assert rec.message.startswith("memory-bound at")
