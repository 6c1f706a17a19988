"""GPU: the harness's verdicts, timing and Nsight Compute profiling work unchanged inside the sandbox, and a
candidate's verify runs jailed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.harness.run import verify_kernel
from cutegen.harness.worker import Worker
from cutegen.sandbox import cgroup
from cutegen.sandbox.jail import Jail, Limits
from cutegen.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "softsign" / "softsign.cu"
pytestmark = pytest.mark.gpu


@pytest.fixture
def session(make_session, tmp_path):
    return make_session(Settings(), state_dir=tmp_path / ".cutegen")


@pytest.fixture
def builder(session, tmp_path):
    return session.builder(tmp_path / "k.cu")


def test_a_verify_with_timing_passes_inside_the_sandbox(jail, builder, tmp_path):
    worker = Worker(jail=jail.with_paths(readonly=[builder.cache.root, KERNEL.with_suffix(".py")]))
    builder.cache.root.mkdir(parents=True, exist_ok=True)
    try:
        rec = verify_kernel(KERNEL, builder, worker, timing=True, state_dir=tmp_path / ".cutegen")
    finally:
        worker.stop()
    assert rec.verdict == "pass", rec.message
    assert rec.timing.median_ms > 0


def test_a_candidate_is_verified_in_the_jailed_worker(session, tmp_path):
    kernel = tmp_path / "softsign.cu"
    kernel.write_text(KERNEL.read_text())
    (tmp_path / "softsign.py").write_text(KERNEL.with_suffix(".py").read_text())
    verifier = session.agent(kernel).verifier  # the editor's agent's judge of candidates
    v = verifier.candidate(kernel, kernel.read_text() + "\n// a candidate: the same kernel\n", timing=True)
    verifier.cancel()
    assert v.ok and v.figures["sandbox"] == "jailed" and "time" in v.tiers, v.label


def test_nsight_compute_profiles_inside_the_sandbox(jail, builder, tmp_path):
    from cutegen.profiler import profile_kernel

    rec = profile_kernel(KERNEL, builder, None, state_dir=tmp_path / ".cutegen", jail=jail)
    assert rec.verdict in ("profiled", "no-counter-permission"), rec.message
    print(f"ncu in the sandbox: {rec.verdict}: {rec.message[:200]}")


def test_one_optimize_step_runs_its_candidates_in_the_sandbox(make_session, tmp_path, monkeypatch):
    import json

    from tests.support.scripted_openai import ScriptedOpenAI

    slow = ROOT / "tests" / "kernels" / "slow_correct.cu"
    kernel = tmp_path / "slow_correct.cu"
    kernel.write_text(slow.read_text().replace("problem=../../examples/softsign/softsign.py",
                                               f"problem={KERNEL.with_suffix('.py')}"))
    replies = json.loads((ROOT / "tests" / "agent" / "replies" / "optimize_slow_softsign.json").read_text())
    monkeypatch.setenv("CUTEGEN_SANDBOX_TEST_KEY", "sk-sandbox-test")
    with ScriptedOpenAI(replies, expect_key="sk-sandbox-test") as server:
        settings = Settings(llm_base_url=server.url, llm_model="scripted", llm_api_key_env="CUTEGEN_SANDBOX_TEST_KEY",
                            max_rounds=2, test_timeout=300)
        session = make_session(settings, state_dir=tmp_path / ".cutegen")
        agent = session.agent(kernel)
        try:
            outcome = agent.optimize(kernel, kernel.read_text())
        finally:
            agent.cancel()
            session.close()  # the worker stops
    steps = [json.loads(p.read_text()) for p in Path(outcome.transcript).parent.glob("*-round*.json")]
    verified = [s["verification"] for s in steps if s.get("step") == "verify" and s.get("verification")]
    assert outcome.ok, outcome.message
    assert verified and all(v["figures"].get("sandbox") == "jailed" for v in verified if "test" in v["tiers"])
    assert "unsandboxed" not in outcome.proposal.label


TAIL = ROOT / "examples" / "softsign_tail" / "softsign_tail.cu"  # 3.1 M elements: quick to build and run

FILL = r"""// cutegen: problem=PROBLEM
// A candidate that leaks 40 GiB of device memory per call: the card is full by the fourth call.
#include <cutegen/abi.h>

__global__ void copy(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + fabsf(x[i]));
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  void* leak = nullptr;
  cudaError_t e = cudaMalloc(&leak, size_t(40) << 30);
  if (e != cudaSuccess) return (int)e;
  const int64_t n = cutegen_numel(inputs[0]);
  copy<<<unsigned((n + 255) / 256), 256, 0, stream>>>(cutegen_data<const float>(inputs[0]),
                                                      cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
"""


def _jailed_worker(jail, builder, limits=None):
    base = Jail(jail.bwrap, limits=limits) if limits is not None else jail
    builder.cache.root.mkdir(parents=True, exist_ok=True)
    return Worker(jail=base.with_paths(readonly=[builder.cache.root, TAIL.with_suffix(".py")]))


def test_cuda_runs_under_a_tight_host_memory_cap(jail, builder, tmp_path):
    """CUDA reserves far more virtual memory than it uses; the cgroup cap counts only what is used (4 GiB here)."""
    worker = _jailed_worker(jail, builder, Limits(memory_bytes=4 << 30))
    try:
        rec = verify_kernel(TAIL, builder, worker, timing=True, state_dir=tmp_path / ".cutegen")
    finally:
        worker.stop()
    assert rec.verdict == "pass", rec.message
    print(f"verified under a 4 GiB cap (memory cgroup: {cgroup.memory_binds()})")


def test_a_candidate_that_fills_the_cards_memory_is_a_verdict(jail, builder, tmp_path):
    kernel = tmp_path / "fill.cu"
    kernel.write_text(FILL.replace("PROBLEM", str(TAIL.with_suffix(".py"))))
    worker = _jailed_worker(jail, builder)
    try:
        rec = verify_kernel(kernel, builder, worker, state_dir=tmp_path / ".cutegen")
    finally:
        worker.stop()
    assert rec.verdict in ("launch-error", "out-of-memory"), (rec.verdict, rec.message)
    assert "memory" in rec.message.lower() or "MemoryAllocation" in rec.message, rec.message
    print(f"a card-filling candidate: {rec.verdict}: {rec.message[:160]}")


def test_a_kernel_that_hangs_in_the_sandbox_is_a_timeout_and_frees_the_gpu(jail, make_session, tmp_path):
    kernel = tmp_path / "hang.cu"
    builder = make_session(Settings(test_timeout=20), state_dir=tmp_path / ".cutegen").builder(kernel)
    kernel.write_text((ROOT / "tests" / "kernels" / "hang.cu").read_text().replace(
        "problem=../../examples/softsign/softsign.py", f"problem={TAIL.with_suffix('.py')}"))
    worker = _jailed_worker(jail, builder)
    try:
        rec = verify_kernel(kernel, builder, worker, state_dir=tmp_path / ".cutegen")
        assert rec.verdict == "timeout" and "hangs" in rec.message, rec
        after = verify_kernel(TAIL, builder, worker, state_dir=tmp_path / ".cutegen")  # a fresh jailed worker
    finally:
        worker.stop()
    assert after.verdict == "pass", after.message
