"""Prompt budgets: prompts fitted into cutegen.llmContextTokens with the most useful parts kept, the
estimate calibrated by the endpoint's reported usage, and tokens recorded per step in the transcript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen.agent import prompts
from cutegen.agent.budget import Budget, estimate
from cutegen.model import Diagnostic, Severity
from tests.support.llm import llm_settings

KERNEL = (Path(__file__).resolve().parent / "diffs" / "base" / "slow.cu").read_text()
HITS = [f"hit {i}: " + "why this happens and how to fix it. " * 40 for i in (1, 2, 3)]
PREVIOUS = [("--- a/slow.cu\n+++ b/slow.cu\n@@ -1 +1 @@\n-a\n+b\n" + "+x\n" * 300, "did not compile")]


def _user(messages) -> str:
    return messages[-1]["content"]


def test_an_ample_window_keeps_everything():
    b = Budget(context_tokens=100_000, reply_tokens=4096)
    user = _user(prompts.diagnose("slow.cu", KERNEL, "the failure", HITS, PREVIOUS, b))
    assert all(h in user for h in HITS) and "Earlier attempts" in user
    assert b.last["left_out"] == [] and not b.last["over"]


def test_a_small_window_leaves_out_old_attempts_then_the_weaker_hits():
    full = Budget(100_000, 0)
    prompts.diagnose("slow.cu", KERNEL, "the failure", HITS, PREVIOUS, full)
    need = full.last["estimated_prompt_tokens"]
    # room for everything but the attempts and about one and a half hits
    b = Budget(context_tokens=int((need - estimate(PREVIOUS[0][0]) - 1.5 * estimate(HITS[0]) + 1000) / 0.95),
               reply_tokens=1000)
    user = _user(prompts.diagnose("slow.cu", KERNEL, "the failure", HITS, PREVIOUS, b))
    assert b.last["left_out"] == ["earlier attempts", "knowledge hit 3", "knowledge hit 2"]
    assert HITS[0] in user and HITS[1] not in user and "Earlier attempts" not in user
    assert KERNEL.rstrip() in user and "the failure" in user and "**What** is wrong" in user
    assert b.last["estimated_prompt_tokens"] <= b.limit


def test_when_only_essentials_are_left_the_failure_text_is_cut_never_the_kernel():
    failure = "note: " + "instantiation of cute::Tensor<...> at line 12 " * 400
    b = Budget(context_tokens=3000, reply_tokens=1000)
    user = _user(prompts.patch("slow.cu", KERNEL, failure, "diagnosis", PREVIOUS, "json", b))
    assert b.last["cut"] == ["condensed diagnostics"] and "cut here to fit" in user
    assert "11 | constexpr int kBlockThreads = 64;" in user and "<<<" in user  # the numbered kernel is whole
    assert b.last["estimated_prompt_tokens"] <= b.limit


def test_the_endpoints_count_calibrates_the_estimate():
    b = Budget(32_000, 4096)
    prompts.patch("slow.cu", KERNEL, "f", "d", [], budget=b)
    first = b.last["estimated_prompt_tokens"]
    b.observe(int(first * 1.5))
    assert b.scale == pytest.approx(1.5, rel=0.01)
    b.observe(1)  # an endpoint that under-reports never makes the estimate smaller than bytes / 3
    assert b.scale >= 1.0


def test_each_step_records_its_tokens_and_fit_in_the_transcript(make_session, kept_path, scripted):
    pytest.importorskip("cutegen.knowledge")
    server = scripted([{"reply": "**What**: a dynamic owning tensor."}, {"reply": "**What**: again."}])
    settings = llm_settings(server.url, llm_context_tokens=2600, max_tokens=512)
    kernel = kept_path / "slow.cu"
    agent = make_session(settings, state_dir=kept_path / ".cutegen").agent(kernel, gpu=False)
    kernel.write_text(KERNEL)
    d = Diagnostic(file=str(kernel), line=17, col=3, end_col=9, severity=Severity.ERROR,
                   message="make_tensor: Dynamic owning tensors not supported", code="cute-static-assert",
                   root="Dynamic owning tensors not supported", data={"api": "cute::make_tensor"})
    for _ in range(2):
        out = agent.diagnose(kernel, KERNEL, diagnostic=d)
        assert out.ok and out.diagnosis_source == "llm"
    steps = sorted(Path(kept_path / ".cutegen" / "agent").rglob("*-round1-diagnose.json"))
    assert len(steps) == 2
    for path in steps:
        step = json.loads(path.read_text())
        assert step["prompt_tokens"] > 0 and step["completion_tokens"] > 0
        assert step["budget"]["limit"] == int(2600 * 0.95) - 512
        assert step["budget"]["left_out"], "a 2600-token window cannot hold every knowledge hit"
    # the scripted endpoint counts chars / 4, fewer than the estimate: the scale stays at its floor
    assert json.loads(steps[1].read_text())["budget"]["scale"] == 1.0
