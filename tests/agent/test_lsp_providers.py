"""The provider modes in the editor: the real language server over stdio (pytest-lsp), configured with a
scripted endpoint in each mode (reasoning-model 400s, <think> blocks, reasoning_content, refusal, SSE-only,
replies cut at the token limit, connections reset mid-reply). Opening a broken kernel starts the background
fix, whose verified patch becomes the quick fix; Optimize runs on a passing kernel. Each ends in a verified
patch (compiled and built: no GPU here, and the label says so) or in a message that names its cause."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from tests.agent import provider_cases as cases
from tests.support.llm import no_key_anywhere
from tests.agent.test_lsp_agent import _actions, _until
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.asyncio,
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")]

THINK = "The error is on line 6: HALF is not declared anywhere, so <think>-style notes stay out of the answer."
QUICK_FIX = "CuTeGen: apply verified fix (compiled, not run)"
OPTIMIZED = f"block size: {cases.FIX_LABEL} · speed not measured"
CUT = "cut off at the token limit"
RESET = "closed the connection before its reply was complete"


@pytest.fixture
def workspace(provider_workspace):
    """Every test in this module works in the shared provider workspace (compiles once)."""
    return provider_workspace


def _mode(name, replies, expect_fix, expect_optimize, endpoint=None, settings=None):
    marks = [pytest.mark.replies(replies), pytest.mark.endpoint(**(endpoint or {})),
             pytest.mark.cutegen_settings(settings or {})]
    return pytest.param(name, expect_fix, expect_optimize, marks=marks, id=name)


MODES = [
    _mode("reasoning-model", cases.fix_replies() + cases.optimize_replies(), QUICK_FIX, OPTIMIZED,
          endpoint={"reasoning_model": True}),
    _mode("think-blocks", cases.fix_replies(think=THINK) + cases.optimize_replies(think=THINK), QUICK_FIX, OPTIMIZED),
    _mode("reasoning-content", cases.fix_replies(reasoning_content=THINK) + cases.optimize_replies(
        reasoning_content=THINK), QUICK_FIX, OPTIMIZED),
    _mode("refusal", [{"match": "TASK: diagnose", "refusal": cases.REFUSAL},
                      {"match": "TASK: optimize", "refusal": cases.REFUSAL}],
          f"No fix proposed: the model refused the request: \u201c{cases.REFUSAL}\u201d",
          f"No optimization proposed: the model refused the request: \u201c{cases.REFUSAL}\u201d"),
    _mode("sse-only", [{"match": "TASK: diagnose", "reply": "(a stream the plain request does not read)"},
                       *cases.fix_replies(), *cases.optimize_replies()], QUICK_FIX, OPTIMIZED,
          endpoint={"sse_only": True}),
    _mode("truncation", [*cases.fix_replies(finish_reason="length")[:1], {**cases.fix_replies()[1], "finish_reason":
                                                                           "length", "reply": cases.FIX[:60]},
                         {**cases.optimize_replies()[0], "finish_reason": "length", "reply": cases.OPTIMIZE[:90]}],
          f"round 1: patch-rejected (the reply was {CUT}", f"the reply was {CUT}", settings={"maxRounds": 1}),
    _mode("reset-mid-reply", [{"match": "TASK: diagnose", "reply": "x" * 5000, "reset_after": 1500},
                              *cases.fix_replies(),
                              *[{**cases.optimize_replies()[0], "reset_after": 300}] * 2], QUICK_FIX,
          "No optimization proposed: the LLM endpoint at"),
]


@pytest.mark.parametrize("mode, expect_fix, expect_optimize", MODES)
async def test_the_quick_fix_and_optimize_end_in_a_patch_or_a_named_cause(client, workspace, mode,
                                                                          expect_fix, expect_optimize):
    uri = open_in_editor(client, workspace / "kernel.cu", cases.BROKEN)
    (log,) = await _until(lambda: [m.message for m in client.log_messages
                                   if m.message.startswith("background fix of kernel.cu")], 300, "the background fix")
    error = next(d for d in client.diagnostics[uri] if d.severity == types.DiagnosticSeverity.Error)
    titles = [a.title for a in await _actions(client, uri, error)]
    if expect_fix == QUICK_FIX:
        assert log.endswith(cases.FIX_LABEL) and titles == [QUICK_FIX]
    else:
        assert expect_fix in log and titles == [], log

    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.optimize", arguments=[{"uri": (workspace / "good.cu").as_uri(), "version": None}]))
    if expect_optimize == OPTIMIZED:
        assert answer["ok"] and answer["message"] == OPTIMIZED
        assert answer["patch"]["verified"] == f"{cases.FIX_LABEL} · speed not measured"
        assert "+  halve_kernel<<<(unsigned)((n + 511) / 512), 512, 0, s>>>(" in answer["patch"]["diff"]
    else:
        assert not answer["ok"] and expect_optimize in answer["message"], answer["message"]
    _check_mode(mode, client.scripted.requests, answer, workspace)
    assert client.scripted.remaining() == 0  # nothing deterministic was asked twice
    no_key_anywhere(workspace)


def _check_mode(mode: str, requests: list[dict], answer: dict, workspace) -> None:
    """What each mode must show besides its outcome."""
    if mode == "reasoning-model":
        assert requests[-1]["params"] == {"max_completion_tokens": 4096}
        assert "max_completion_tokens" in (workspace / ".cutegen" / "llm-endpoints.json").read_text()
    if mode in ("think-blocks", "reasoning-content"):
        (step,) = [json.loads(p.read_text()) for p in Path(answer["transcript"]).parent.glob("*-optimize.json")]
        assert step["reasoning"] == THINK and "<think>" not in step["reply"] and step["reply"] == cases.OPTIMIZE
    if mode == "sse-only":
        assert [r["stream"] for r in requests] == [False] + [True] * (len(requests) - 1)
    if mode == "reset-mid-reply":
        assert RESET in answer["message"] and "cannot reach" not in answer["message"]
        assert "after 2 attempts" in answer["message"]
