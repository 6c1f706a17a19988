"""On the GPU (H200), through the language server: Optimize of the slow softsign against an endpoint that
behaves as a reasoning model behind an SSE-only server (HTTP 400 for max_tokens and for the temperature, an
event stream to a plain request, the answer after a <think> block) ends in a verified, measured, really
faster patch: the parameter lessons and the stream carry the whole pipeline, not only the client."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.llm import no_key_anywhere
from tests.agent.test_gpu_agent import REPLIES, _kernel, _run
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.gpu, pytest.mark.asyncio]

VECTORIZED = REPLIES[1]  # the scripted 128-bit vectorization (the first scripted reply is a broken grid)
THINK = "The profile says memory-bound with few bytes in flight; float4 quadruples them."


@pytest.mark.replies([{"match": "TASK: optimize", "reply": "(a stream the plain request does not read)"},
                      {**VECTORIZED, "think": THINK}])
@pytest.mark.endpoint(reasoning_model=True, sse_only=True)
@pytest.mark.cutegen_settings({"maxRounds": 1, "testTimeout": 300})
async def test_optimize_with_a_streaming_reasoning_model_proposes_a_verified_faster_diff(client, workspace):
    uri = open_in_editor(client, _kernel(workspace))
    reply = await _run(client, "cutegen.server.optimize", uri=uri, version=1)
    assert "patch" in reply, reply["message"]
    patch = reply["patch"]
    assert re.fullmatch(r"compiles · correct on 5 trials · \d+\.\d+× faster than before \(\S+ → \S+ ms\)",
                        patch["verified"]), patch["verified"]
    assert patch["figures"]["speedup"] > 1 + patch["figures"]["noise"] and "float4" in patch["new_text"]
    sent = client.scripted.requests
    assert [("max_tokens" in r["params"], "temperature" in r["params"], r["stream"]) for r in sent] == [
        (True, True, False), (False, True, False), (False, False, False), (False, False, True)]
    (step,) = [json.loads(p.read_text()) for p in Path(reply["transcript"]).parent.glob("*-optimize.json")]
    assert step["reasoning"] == THINK and step["streamed"] and "<think>" not in step["reply"]
    no_key_anywhere(workspace)
