"""GPU: the harness's verdicts, timing and Nsight Compute profiling work unchanged inside the sandbox, and a
candidate's verify runs jailed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.build import Builder
from cutegen.harness.run import verify_kernel
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


def test_one_optimize_step_runs_its_candidates_in_the_sandbox(toolchain, tmp_path, monkeypatch):
    import json

    from cutegen.agent.loop import Agent
    from tests.support.scripted_openai import ScriptedOpenAI

    slow = ROOT / "tests" / "kernels" / "slow_correct.cu"
    kernel = tmp_path / "slow_correct.cu"
    kernel.write_text(slow.read_text().replace("problem=../../examples/softsign/softsign.py",
                                               f"problem={KERNEL.with_suffix('.py')}"))
    replies = json.loads((ROOT / "tests" / "agent" / "replies" / "optimize_slow_softsign.json").read_text())
    monkeypatch.setenv("CUTEGEN_SANDBOX_TEST_KEY", "sk-sandbox-test")
    worker = Worker()
    with ScriptedOpenAI(replies, expect_key="sk-sandbox-test") as server:
        settings = Settings(llm_base_url=server.url, llm_model="scripted", llm_api_key_env="CUTEGEN_SANDBOX_TEST_KEY",
                            max_rounds=2, test_timeout=300)
        agent = Agent(settings, Builder(toolchain, settings, tmp_path / ".cutegen"), worker,
                      state_dir=tmp_path / ".cutegen")
        try:
            outcome = agent.optimize(kernel, kernel.read_text())
        finally:
            agent.cancel()
            worker.stop()
    steps = [json.loads(p.read_text()) for p in Path(outcome.transcript).parent.glob("*-round*.json")]
    verified = [s["verification"] for s in steps if s.get("step") == "verify" and s.get("verification")]
    assert outcome.ok, outcome.message
    assert verified and all(v["figures"].get("sandbox") == "jailed" for v in verified if "test" in v["tiers"])
    assert "unsandboxed" not in outcome.proposal.label
