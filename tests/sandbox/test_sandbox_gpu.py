"""GPU: the harness's verdicts, timing and Nsight Compute profiling work unchanged inside the sandbox, and a
candidate's verify runs jailed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.build import Builder
from cutegen.harness.verify import verify_kernel
from cutegen.harness.worker import Worker
from cutegen.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "softsign" / "softsign.cu"
pytestmark = pytest.mark.gpu


@pytest.fixture
def builder(toolchain, tmp_path):
    return Builder(toolchain, Settings(), tmp_path / ".cutegen")


def test_a_verify_with_timing_passes_inside_the_sandbox(jail, builder, tmp_path):
    worker = Worker(jail=jail.with_paths(readonly=[builder.cache.root, KERNEL.with_suffix(".py")]))
    builder.cache.root.mkdir(parents=True, exist_ok=True)
    try:
        rec = verify_kernel(KERNEL, builder, worker, timing=True, state_dir=tmp_path / ".cutegen")
    finally:
        worker.stop()
    assert rec["verdict"] == "pass", rec["message"]
    assert rec["timing"]["median_ms"] > 0


def test_a_candidate_is_verified_in_the_jailed_worker(builder, tmp_path):
    from cutegen.agent.candidates import Verifier

    kernel = tmp_path / "softsign.cu"
    kernel.write_text(KERNEL.read_text())
    (tmp_path / "softsign.py").write_text(KERNEL.with_suffix(".py").read_text())
    verifier = Verifier(builder, Worker(), state_dir=tmp_path / ".cutegen")
    v = verifier.candidate(kernel, kernel.read_text() + "\n// a candidate: the same kernel\n", timing=True)
    verifier.cancel()
    assert v.ok and v.figures["sandbox"] == "jailed" and "time" in v.tiers, v.label


def test_nsight_compute_profiles_inside_the_sandbox(jail, builder, tmp_path):
    from cutegen.profiler import profile_kernel

    rec = profile_kernel(KERNEL, builder, None, state_dir=tmp_path / ".cutegen", jail=jail)
    assert rec["verdict"] in ("profiled", "no-counter-permission"), rec["message"]
    print(f"ncu in the sandbox: {rec['verdict']}: {rec['message'][:200]}")
