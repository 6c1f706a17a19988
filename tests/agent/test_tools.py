"""Tool-calling mode with the scripted endpoint answering with tool calls (real HTTP, the real openai
client) and the real check and build tiers (nvcc): the model checks, searches the knowledge base,
looks up a CuTe name, proposes patches; only a verified one is offered; budgets; the fallback to the
pipeline when the endpoint does not take tools."""

from __future__ import annotations

import json
from pathlib import Path

from cutegen.agent.llm import LLMClient, LLMError
from cutegen.agent.tools import SPECS, lookup
from tests.support.llm import llm_settings, no_key_anywhere
from tests.agent.test_loop import KERNEL, _error, _kernel

SR_BAD = "<<<<<<< SEARCH\n  y[i] = NOT_IN_FILE;\n=======\n  y[i] = 1.0f;\n>>>>>>> REPLACE\n"
SR_GOOD = "<<<<<<< SEARCH\n  y[i] = BROKEN;\n=======\n  y[i] = 1.0f;\n>>>>>>> REPLACE\n"


def _call(tool, **arguments):
    return {"name": tool, "arguments": arguments}


def _tool_steps(out) -> list[dict]:
    folder = Path(out.transcript).parent
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*-tool.json"))]


def test_fix_with_tools_check_search_lookup_then_a_verified_patch(agent_with, kept_path, scripted):
    server = scripted([
        {"match": "TASK: fix", "tool_calls": [_call("check")]},
        {"match": "TASK: fix", "match_tool": "does not compile", "reply": "Let me search.",
         "tool_calls": [_call("knowledge_search", query='identifier "BROKEN" is undefined'), _call("cute_api", name="make_tensor")]},
        {"match": "TASK: fix", "tool_calls": [_call("propose_patch", edit=SR_BAD)]},
        {"match": "TASK: fix", "match_tool": "refused (not-found)", "tool_calls": [_call("propose_patch", edit=SR_GOOD)]},
    ])
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url, llm_mode="tools")).fix(path, KERNEL, diagnostic=_error(path))
    assert out.ok and out.proposal is not None, out.message
    assert out.proposal.new_text == KERNEL.replace("BROKEN", "1.0f")
    assert out.proposal.label == "compiled and built · not tested: no problem paired with k.cu"
    assert out.proposal.figures["mode"] == "tools" and out.proposal.figures["tool_calls"] == 5
    steps = _tool_steps(out)
    assert [s["name"] for s in steps] == ["check", "knowledge_search", "cute_api", "propose_patch", "propose_patch"]
    assert 'identifier "BROKEN" is undefined' in steps[0]["result"]
    assert "cute/tensor_impl.hpp" in steps[2]["result"] and "make_tensor" in steps[2]["result"]
    assert steps[3]["result"].startswith("refused (not-found)") and steps[4]["result"].startswith("verified")
    # every request offered the tools, and the tool results went back to the model
    assert all(r["tools"] == [s["function"]["name"] for s in SPECS] for r in server.requests)
    last = server.requests[-1]["messages"]
    assert [m["role"] for m in last[-2:]] == ["assistant", "tool"] and "refused (not-found)" in last[-1]["content"]
    assert out.usage.calls == 4 and server.remaining() == 0
    no_key_anywhere(kept_path)


def test_the_call_budget_ends_a_session_that_never_proposes(agent_with, kept_path, scripted):
    server = scripted([
        {"match": "TASK: fix", "tool_calls": [_call("knowledge_search", query="cute"), _call("no_such_tool")]},
        {"match": "TASK: fix", "tool_calls": [{"name": "cute_api", "arguments": "{not json"}]},
    ])
    path = _kernel(kept_path)
    settings = llm_settings(server.url, llm_mode="tools", llm_tool_calls=3)
    out = agent_with(settings).fix(path, KERNEL, diagnostic=_error(path))
    assert not out.ok and out.proposal is None
    assert "after 3 tool call(s)" in out.message and "budget of 3 tool calls" in out.message
    results = [s["result"] for s in _tool_steps(out)]
    assert results[1].startswith("unknown tool 'no_such_tool'") and "not a JSON object" in results[2]


def test_an_endpoint_without_tools_falls_back_to_the_pipeline(agent_with, kept_path, scripted):
    server = scripted([
        {"match": "TASK: diagnose", "reply": "**What**: BROKEN is undefined."},
        {"match": "TASK: patch", "reply": SR_GOOD},
    ], tools_supported=False)
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url, llm_mode="tools")).fix(path, KERNEL, diagnostic=_error(path))
    assert out.ok and out.proposal.new_text == KERNEL.replace("BROKEN", "1.0f")
    assert server.requests[0]["tools"] and not server.requests[1]["tools"]
    fallback = next(Path(out.transcript).parent.glob("*-fallback.json"))
    assert "does not take tool calls" in json.loads(fallback.read_text())["reason"]


def test_the_client_reads_tool_calls_and_names_the_missing_support(scripted):
    server = scripted([{"tool_calls": [_call("check"), _call("cute_api", name="local_tile")]}])
    client = LLMClient(llm_settings(server.url))
    reply = client.chat([{"role": "user", "content": "TASK: x"}], tools=SPECS)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [("check", {}), ("cute_api", {"name": "local_tile"})]
    assert reply.finish_reason == "tool_calls"
    down = scripted([{"reply": "never sent"}], tools_supported=False)
    try:
        LLMClient(llm_settings(down.url)).chat([{"role": "user", "content": "TASK: x"}], tools=SPECS)
    except LLMError as e:
        assert e.kind == "no-tools" and "tool" in e.message
    else:
        raise AssertionError("a 400 for tools must raise no-tools")
    assert len(down.requests) == 1  # not retried


def test_cute_api_lookup_reads_the_installed_headers():
    from cutegen.toolchain import find_cutlass_include

    include = str(find_cutlass_include(None))
    found = lookup(include, "cute::make_tiled_copy")
    assert found.startswith("1 definition(s) of make_tiled_copy") and "cute/atom/copy_atom.hpp:" in found
    assert "struct UniversalCopy" in lookup(include, "UniversalCopy")
    assert lookup(include, "no_such_name_here") == "no definition of no_such_name_here in the CuTe headers"
    assert lookup(include, "a; rm -rf /").startswith("not a C++ name")


def test_a_long_session_leaves_out_the_oldest_tool_results_to_fit_the_window():
    from cutegen.agent.budget import Budget
    from cutegen.agent.tools import _fit_history

    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "TASK: fix"}]
    for i in range(6):
        messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": str(i)}]},
                     {"role": "tool", "tool_call_id": str(i), "content": f"result {i} " + "x" * 3000}]
    _fit_history(messages, Budget(context_tokens=3600, reply_tokens=500))
    kept = [m["content"].split()[1] for m in messages if m["role"] == "tool" and m["content"].startswith("result")]
    assert kept == ["4", "5"] and messages[1]["content"] == "TASK: fix"
