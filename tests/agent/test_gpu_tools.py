"""On the GPU (H200), through the language server: one Optimize step in tool-calling mode with the
scripted model — it profiles, searches the knowledge base, then proposes 128-bit vectorization — and
the proposal is verified and really faster, with its tool calls in the transcript."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.llm import no_key_anywhere
from tests.agent.test_gpu_agent import REPLIES as PIPELINE_REPLIES, _kernel, _run
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.gpu, pytest.mark.asyncio]

VECTORIZE = next(e["reply"] for e in PIPELINE_REPLIES if "128-bit" in e["reply"])
REPLIES = [
    {"match": "TASK: optimize", "tool_calls": [{"name": "profile", "arguments": {}}]},
    {"match": "TASK: optimize", "tool_calls": [{"name": "knowledge_search",
                                                "arguments": {"query": "128-bit vectorized loads memory-bound elementwise"}}]},
    {"match": "TASK: optimize", "tool_calls": [{"name": "propose_patch", "arguments": {"edit": VECTORIZE}}]},
]


@pytest.mark.replies(REPLIES)
@pytest.mark.cutegen_settings({"llmMode": "tools", "testTimeout": 300})
async def test_optimize_in_tool_calling_mode(client, workspace):
    uri = open_in_editor(client, _kernel(workspace))
    reply = await _run(client, "cutegen.server.optimize", uri=uri, version=1)
    assert "patch" in reply, reply["message"]
    patch = reply["patch"]
    assert re.fullmatch(r"compiles · correct on 5 trials · (\d+\.\d+)× faster than before \((\S+) → (\S+) ms\)",
                        patch["verified"]), patch["verified"]
    figures = patch["figures"]
    assert figures["mode"] == "tools" and figures["tool_calls"] == 3 and "vectorized" in figures["change"]
    assert figures["speedup"] > 1.2 and figures["tiers"] == ["check", "build", "test", "time"]
    steps = [json.loads(p.read_text()) for p in sorted((workspace / ".cutegen" / "agent").rglob("*-tool.json"))]
    assert [s["name"] for s in steps] == ["profile", "knowledge_search", "propose_patch"]
    assert "bound" in steps[0]["result"], steps[0]["result"]  # a real Nsight Compute classification
    assert steps[2]["result"].startswith("verified: compiles · correct on 5 trials")
    print("tool calls:", [(s["name"], s["seconds"], s["result"][:80]) for s in steps])
    no_key_anywhere(workspace)
