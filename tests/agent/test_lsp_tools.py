"""Tool-calling mode through the language server: a broken kernel → the scripted model calls check and
knowledge_search → proposes a patch → verified → offered as a quick fix, with the tool calls in the
transcript."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from tests.support.llm import no_key_anywhere
from tests.agent.test_lsp_agent import BROKEN, LINE, _actions, _errors, _until, needs_nvcc
from tests.support.editor import open_in_editor

pytestmark = pytest.mark.asyncio

FIX = ("<<<<<<< SEARCH\n  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));\n=======\n"
       "  Tensor rAcc = make_tensor<float>(Int<4>{});\n>>>>>>> REPLACE\n")
REPLIES = [
    {"match": "TASK: fix", "tool_calls": [{"name": "check", "arguments": {}}]},
    {"match": "TASK: fix", "match_tool": "Dynamic owning tensors not supported",
     "tool_calls": [{"name": "knowledge_search", "arguments": {"query": "Dynamic owning tensors not supported"}}]},
    {"match": "TASK: fix", "match_tool": "static", "reply": "The accumulator needs a static size.",
     "tool_calls": [{"name": "propose_patch", "arguments": {"edit": FIX}}]},
]


@needs_nvcc
@pytest.mark.replies(REPLIES)
@pytest.mark.cutegen_settings({"llmMode": "tools"})
async def test_a_tool_calling_model_fixes_the_kernel_as_a_verified_quick_fix(client, workspace):
    path = workspace / "row_sum.cu"
    path.write_text(BROKEN)
    uri = open_in_editor(client, path, BROKEN)
    first = await _until(lambda: [p for p in client.published if p.uri == uri], 90, "diagnostics")
    (error,) = _errors(first[0])
    assert error.range.start.line == LINE
    (action,) = await _until(lambda: _actions(client, uri, error), 240, "a verified quick fix")
    assert action.title == "CuTeGen: apply verified fix (compiled, not tested)"
    assert client.scripted.remaining() == 0
    assert all(r["tools"] for r in client.scripted.requests)  # every request offered the tools
    steps = [json.loads(p.read_text()) for p in sorted((workspace / ".cutegen" / "agent").rglob("*-tool.json"))]
    assert [s["name"] for s in steps] == ["check", "knowledge_search", "propose_patch"]
    assert steps[-1]["result"].startswith("verified: compiled and built")
    no_key_anywhere(workspace)
