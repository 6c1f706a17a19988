"""`cutegen suite run --agent` end to end with the scripted OpenAI-compatible endpoint (real HTTP, the real openai
client): generate → check/build (real nvcc) → test (the harness's checks, on the CPU, in the suite's workers) →
diagnose → patch → ... → optimize → the kept version judged. Replies: one correct at once, one that never
compiles, one that stays wrong, one that hangs and is then fixed."""

from __future__ import annotations

import json

import pytest

from cutegen.suite.judge import Budget
from cutegen.suite.runner import run_suite
from tests.support.llm import llm_settings, no_key_anywhere
from tests.support.suite_cases import LEVEL1


def kernel(body: str) -> str:
    return f"""#include <cutegen/abi.h>
#include <math.h>

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {{
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  int64_t n = cutegen_numel(inputs[0]);
{body}
  return 0;
}}
"""


SOFTSIGN = "  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + fabsf(x[i]));"
RELU_WRONG = "  for (int64_t i = 0; i < n; ++i) y[i] = x[i];"
HARDTANH_BROKEN = "  for (int64_t i = 0; i < n; ++i) y[i] = fminf(1.f, fmaxf(-1.f, x[i])) +;"
SIGMOID_HANG = ("  for (volatile int spin = 1; spin;) {}\n"
                "  for (int64_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + expf(-x[i]));")


def generated(body: str) -> str:
    return f"Here is the kernel.\n```cuda\n{kernel(body)}```\n"


def diff(name: str, old: str, new: str) -> str:
    return f"```diff\n--- a/{name}.cu\n+++ b/{name}.cu\n@@ -10,1 +10,1 @@\n-{old}\n+{new}\n```\n"


def replies() -> list[dict]:
    gen = lambda name, body: {"match": f"TASK: generate `{name}.cu`", "reply": generated(body)}  # noqa: E731
    # the first reply's endpoint reports its cost (OpenRouter-style); the others are priced by --llm-price
    diag = lambda name: {"match": f"TASK: diagnose `{name}.cu`", "reply": f"**What**: {name} is wrong."}  # noqa: E731
    patch = lambda name, old, new: {"match": f"TASK: patch `{name}.cu`", "reply": diff(name, old, new)}  # noqa: E731
    return [
        {**gen("30_Softsign", SOFTSIGN), "cost": 0.25},
        {"match": "TASK: optimize `30_Softsign.cu`", "reply": "CHANGE: unroll — fewer branches\n" + diff(
            "30_Softsign", SOFTSIGN.strip(), "for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + fabsf(x[i]));")},
        gen("19_ReLU", RELU_WRONG), diag("19_ReLU"),
        patch("19_ReLU", RELU_WRONG.strip(), "for (int64_t i = 0; i < n; ++i) y[i] = 1.0f * x[i];"),
        gen("32_HardTanh", HARDTANH_BROKEN), diag("32_HardTanh"),
        patch("32_HardTanh", HARDTANH_BROKEN.strip(), "for (int64_t i = 0; i < n; ++i) y[i] = fminf(1.f, x[i]) -;"),
        gen("21_Sigmoid", SIGMOID_HANG), diag("21_Sigmoid"),
        patch("21_Sigmoid", "for (volatile int spin = 1; spin;) {}", "// (the spin loop is gone)"),
    ]


PROBLEMS = [LEVEL1 / f"{n}.py" for n in ("19_ReLU", "21_Sigmoid", "30_Softsign", "32_HardTanh")]


def test_the_agent_pipeline_over_four_problems(make_config, scripted, tmp_path):
    server = scripted(replies())
    # sandbox off: the candidates run in the suite's workers with the CPU handler (tests/suite/host_judge.py); the
    # jailed route through those workers is test_jailed_candidates_run_on_the_suites_gpu_workers
    settings = llm_settings(server.url, test_timeout=6.0, sandbox="off")
    config = make_config(kernels=None, agent=True, settings=settings, llm_price=(3.0, 15.0), llm_concurrency=2,
                         budget=Budget(rounds=1, llm_calls=10, wall_s=300, optimize_steps=1))
    summary = run_suite(PROBLEMS, config)
    by = {r["name"]: r for r in summary.rows}
    assert {n: r["verdict"] for n, r in by.items()} == {
        "30_Softsign": "pass", "21_Sigmoid": "pass", "19_ReLU": "mismatch", "32_HardTanh": "check-failed"}
    assert by["30_Softsign"]["rounds_to_correct"] == 1 and by["30_Softsign"]["llm_calls"] == 2  # generate, optimize
    assert by["21_Sigmoid"]["rounds_to_correct"] == 2  # the hang (a timeout), then the fix
    assert by["19_ReLU"]["rounds_to_correct"] is None and by["19_ReLU"]["correct"] is False
    assert by["32_HardTanh"]["compiled"] is False and by["32_HardTanh"]["kernel_written"] is False
    assert by["30_Softsign"]["sandbox"] == "ran unsandboxed: cutegen.sandbox is off"
    for r in by.values():
        assert r["prompt_tokens"] > 0 and r["llm_cost_usd"] > 0
    assert by["30_Softsign"]["llm_cost_usd"] == 0.25 and by["19_ReLU"]["reported_cost_usd"] is None
    # the kept kernels are files a person can open, paired with their problem
    kept = (config.out / "kernels" / "21_Sigmoid.cu").read_text()
    assert "volatile" not in kept and "// cutegen: problem=" in kept
    assert server.remaining() == 0
    from cutegen.suite import report

    md, _ = report.write([config.out])
    # 2 + 3 + 3 + 4 (21_Sigmoid's optimize request got no scripted reply: a failed call still counts)
    assert "| LLM calls · tokens (prompt + completion) · cost | 12 · " in md.read_text()
    no_key_anywhere(config.out)


def test_the_llm_call_budget_ends_a_problem_cleanly(make_config, scripted):
    server = scripted(replies())
    config = make_config(kernels=None, agent=True, settings=llm_settings(server.url, test_timeout=6.0, sandbox="off"),
                         budget=Budget(rounds=3, llm_calls=1, wall_s=300, optimize_steps=1))
    (row,) = run_suite([LEVEL1 / "19_ReLU.py"], config).rows
    assert row["verdict"] == "mismatch" and row["llm_calls"] == 1  # the repair was refused by the budget
    assert json.loads((config.out / "suite.json").read_text())["budget"]["llm_calls"] == 1


def test_jailed_candidates_run_on_the_suites_gpu_workers(make_session, tmp_path):
    """With the sandbox on, the agent's candidate runs go to the suite's worker of a free GPU, which starts the
    jail (real bwrap, the real harness inside: here it can only answer that the library is missing)."""
    from cutegen.agent.candidates import Verifier
    from cutegen.sandbox import availability
    from cutegen.settings import Settings
    from cutegen.suite.gpus import GpuWorker, LocalBackend
    from cutegen.suite.judge import on_suite_gpus

    if not availability().ok:
        pytest.skip(f"no sandbox here: {availability().reason}")
    backend = LocalBackend(["0"])
    try:
        settings = Settings()
        worker = backend.worker("30_Softsign")
        builder = make_session(settings, state_dir=tmp_path / ".cutegen").builder(tmp_path / "k.cu")
        verifier = Verifier(builder, worker, state_dir=tmp_path / ".cutegen", gpu=True,
                            candidate_runner=on_suite_gpus(worker))  # as suite/judge.py wires the agent's
        worker, note = verifier.candidate_worker(LEVEL1 / "30_Softsign.py")
        assert isinstance(worker, GpuWorker) and worker.jail is not None and note == ""
        reply = worker.call({"problem": str(LEVEL1 / "30_Softsign.py"), "library": str(tmp_path / "missing.so")}, 60)
        assert reply["verdict"] == "problem-error" and "missing.so" in reply["message"] and reply["gpu"] == "0"
    finally:
        backend.close()
