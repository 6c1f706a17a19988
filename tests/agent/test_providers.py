"""The LLM client against endpoints that behave as real providers do (the scripted endpoint over real HTTP,
the real `openai` client): reasoning models that refuse max_tokens and temperature, <think> blocks and
reasoning_content, refusals, SSE-only servers, replies cut at the token limit, connections reset mid-reply.
Each ends in a reply or in an error that names its cause, and nothing deterministic is retried."""

from __future__ import annotations

import json

import pytest

from cutegen.agent.endpoint import endpoint_key
from cutegen.agent.llm import LLMClient, LLMError
from tests.support.llm import KEY, llm_settings

HI = [{"role": "user", "content": "TASK: hello"}]


def _sent(server) -> list[dict]:
    return [r["params"] for r in server.requests]


# -- reasoning models ------------------------------------------------------------------------------

def test_a_reasoning_model_is_used_after_one_request_per_refused_parameter(scripted, tmp_path):
    server = scripted([{"reply": "the answer"}], reasoning_model=True)
    reply = LLMClient(llm_settings(server.url, max_tokens=321), state_dir=tmp_path / ".cutegen").chat(HI)
    assert reply.text == "the answer" and reply.usage.attempts == 3 and reply.usage.calls == 1
    first, second, third = _sent(server)
    assert first == {"max_tokens": 321, "temperature": 0.2}
    assert second == {"max_completion_tokens": 321, "temperature": 0.2}
    assert third == {"max_completion_tokens": 321}
    assert any("max_tokens" in n and "max_completion_tokens" in n for n in reply.notes)
    assert any("temperature left out" in n for n in reply.notes)


def test_what_was_learned_is_remembered_in_the_session_and_under_cutegen(scripted, tmp_path):
    from cutegen.agent import endpoint

    state = tmp_path / ".cutegen"
    server = scripted([{"reply": "one"}, {"reply": "two"}, {"reply": "three"}], reasoning_model=True)
    LLMClient(llm_settings(server.url), state_dir=state).chat(HI)
    assert LLMClient(llm_settings(server.url)).chat(HI).usage.attempts == 1  # the session knows
    endpoint.forget_session()  # a new process: the file knows
    assert LLMClient(llm_settings(server.url), state_dir=state).chat(HI).usage.attempts == 1
    assert _sent(server)[-1] == {"max_completion_tokens": 4096}
    saved = json.loads((state / "llm-endpoints.json").read_text())
    entry = saved["endpoints"][endpoint_key(server.url, "scripted")]
    assert sorted(entry["refused"]) == ["max_tokens", "temperature"] and "max_completion_tokens" in entry["why"]["max_tokens"]
    assert KEY not in (state / "llm-endpoints.json").read_text()


def test_the_remembered_choice_is_per_model(scripted, tmp_path):
    server = scripted([{"reply": "a"}, {"reply": "b"}], reasoning_model=True)
    LLMClient(llm_settings(server.url), state_dir=tmp_path).chat(HI)
    LLMClient(llm_settings(server.url, llm_model="other"), state_dir=tmp_path).chat(HI)
    assert len(server.requests) == 6  # the second model learned for itself


def test_explicit_settings_are_sent_as_chosen_and_a_refusal_names_them(scripted):
    server = scripted([{"reply": "ok"}], reasoning_model=True)
    s = llm_settings(server.url, llm_token_parameter="max_completion_tokens", llm_send_temperature="no")
    assert LLMClient(s).chat(HI).text == "ok" and _sent(server) == [{"max_completion_tokens": 4096}]
    server = scripted([{"reply": "never"}], reasoning_model=True)
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url, llm_token_parameter="max_tokens")).chat(HI)
    assert e.value.kind == "refused" and "cutegen.llmTokenParameter" in e.value.message
    assert "max_completion_tokens" in e.value.message and len(server.requests) == 1  # a 400 is not retried
    assert "after" not in e.value.message


def test_no_token_limit_at_all_when_asked(scripted):
    server = scripted([{"reply": "ok"}], reasoning_model=True)
    LLMClient(llm_settings(server.url, llm_token_parameter="none", llm_send_temperature="no")).chat(HI)
    assert _sent(server) == [{}]


def test_reasoning_effort_is_sent_where_it_is_taken_and_dropped_where_refused(scripted):
    server = scripted([{"reply": "ok"}], reasoning_model=True)
    s = llm_settings(server.url, llm_reasoning_effort="high", llm_token_parameter="max_completion_tokens",
                     llm_send_temperature="no")
    LLMClient(s).chat(HI)
    assert _sent(server) == [{"max_completion_tokens": 4096, "reasoning_effort": "high"}]
    server = scripted([{"reply": "ok"}], rejects_reasoning_effort=True)
    reply = LLMClient(llm_settings(server.url, llm_reasoning_effort="low")).chat(HI)
    assert [("reasoning_effort" in p) for p in _sent(server)] == [True, False]
    assert "reasoning_effort left out" in reply.notes[0]


def test_a_400_about_a_value_is_not_learned_from(scripted):
    """vLLM's answer to a too large max_tokens names the parameter but does not refuse it."""
    server = scripted([{"status": 400, "reply": "'max_tokens' or 'max_completion_tokens' is too large: 4096. This "
                                                "model's maximum context length is 2048 tokens and your request has "
                                                "100 input tokens (4096 > 2048 - 100)."}])
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url)).chat(HI)
    assert e.value.kind == "refused" and "maximum context length" in e.value.message
    assert len(server.requests) == 1


def test_an_endpoint_that_refuses_everything_ends_and_its_words_are_kept_key_free(scripted, tmp_path):
    """A hostile endpoint: every answer a 400 naming every parameter there is, echoing the key."""
    words = f"Unsupported parameters: max_tokens, max_completion_tokens, temperature (key {KEY})"
    server = scripted([{"status": 400, "reply": words}] * 10)
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url), state_dir=tmp_path).chat(HI)
    assert e.value.kind == "refused" and len(server.requests) == 3  # two lessons, then nothing left to leave out
    assert _sent(server)[-1] == {} and KEY not in e.value.message
    assert KEY not in (tmp_path / "llm-endpoints.json").read_text()


def test_a_damaged_lessons_file_is_learned_again(scripted, tmp_path):
    (tmp_path / "llm-endpoints.json").write_text("{not json")
    server = scripted([{"reply": "ok"}], reasoning_model=True)
    assert LLMClient(llm_settings(server.url), state_dir=tmp_path).chat(HI).text == "ok"
    assert json.loads((tmp_path / "llm-endpoints.json").read_text())["schema"] == 1


# -- reasoning text -------------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["no", "yes"])
def test_think_blocks_and_reasoning_content_are_kept_apart_from_the_answer(scripted, stream):
    server = scripted([{"think": "Let me look at line 5.", "reply": "**What**: BROKEN."},
                       {"reasoning_content": "Hidden chain.", "reply": "**What**: still BROKEN."},
                       {"reply": "the template opened it</think>\n\nthe answer"}])
    client = LLMClient(llm_settings(server.url, llm_stream=stream))
    first, second, third = (client.chat(HI) for _ in range(3))
    assert (first.text, first.reasoning) == ("**What**: BROKEN.", "Let me look at line 5.")
    assert (second.text, second.reasoning) == ("**What**: still BROKEN.", "Hidden chain.")
    assert (third.text, third.reasoning) == ("the answer", "the template opened it")
    assert all(r.streamed == (stream == "yes") for r in (first, second, third))


def test_a_reply_that_is_only_reasoning_says_so(scripted):
    server = scripted([{"reply": "<think>\nstill thinking when", "finish_reason": "length"},
                       {"reasoning_content": "all tokens spent here", "reply": "", "finish_reason": "length"}])
    client = LLMClient(llm_settings(server.url))
    for _ in range(2):
        with pytest.raises(LLMError) as e:
            client.chat(HI)
        assert e.value.kind == "truncated" and "reasoning" in e.value.message
        assert "cut off at the token limit (cutegen.maxTokens = 4096) before any answer" in e.value.message
    assert len(server.requests) == 2  # cut off twice: never retried


# -- named causes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["no", "yes"])
def test_a_refusal_is_shown_and_never_retried(scripted, stream):
    server = scripted([{"refusal": "I can't help with modifying that kernel."}] * 4)
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url, llm_retries=3, llm_stream=stream)).chat(HI)
    assert e.value.kind == "refusal" and "I can't help with modifying that kernel." in e.value.message
    assert "empty reply" not in e.value.message and len(server.requests) == 1


def test_an_sse_only_endpoint_is_streamed_from(scripted, tmp_path):
    # the plain request's answer (an event stream) is not read: the streamed request asks again
    server = scripted([{"reply": "unread"}, {"reply": "streamed " * 20, "reasoning_content": "hmm"},
                       {"reply": "again"}], sse_only=True)
    reply = LLMClient(llm_settings(server.url), state_dir=tmp_path).chat(HI)
    assert reply.text == "streamed " * 20 and reply.reasoning == "hmm" and reply.streamed
    assert [p.get("stream", False) for p in _sent(server)] == [False, True] and "event stream" in reply.notes[0]
    assert reply.usage.prompt_tokens > 0  # from the usage chunk stream_options asked for
    assert LLMClient(llm_settings(server.url), state_dir=tmp_path).chat(HI).usage.attempts == 1


def test_an_sse_only_endpoint_with_streaming_off_is_named(scripted):
    server = scripted([{"reply": "x"}] * 3, sse_only=True)
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url, llm_stream="no")).chat(HI)
    assert "event stream (SSE)" in e.value.message and "cutegen.llmStream" in e.value.message
    assert len(server.requests) == 1


def test_streamed_tool_calls_are_put_together(scripted):
    server = scripted([{"tool_calls": [{"name": "check", "arguments": {"text": "int x = 1;" * 10}}]}], sse_only=True)
    reply = LLMClient(llm_settings(server.url, llm_stream="yes")).chat(HI, tools=[
        {"type": "function", "function": {"name": "check", "parameters": {"type": "object"}}}])
    (call,) = reply.tool_calls
    assert call.name == "check" and json.loads(call.arguments) == {"text": "int x = 1;" * 10}
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize("stream", ["no", "yes"])
def test_a_connection_reset_mid_reply_is_named_and_retried(scripted, stream, monkeypatch):
    monkeypatch.setattr("cutegen.agent.llm.BACKOFF_BASE_S", 0.01)
    server = scripted([{"reply": "x" * 4000, "reset_after": 900}] * 2 + [{"reply": "whole"}])
    assert LLMClient(llm_settings(server.url, llm_stream=stream)).chat(HI).text == "whole"
    server = scripted([{"reply": "x" * 4000, "reset_after": 900}] * 2)
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url, llm_stream=stream, llm_retries=1)).chat(HI)
    assert e.value.kind == "connection" and "closed the connection before its reply was complete" in e.value.message
    assert "cannot reach" not in e.value.message and "after 2 attempts" in e.value.message


def test_an_unreachable_endpoint_still_says_so():
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings("http://127.0.0.1:9/v1", llm_retries=0)).chat(HI)
    assert e.value.kind == "connection" and "cannot reach the LLM endpoint at http://127.0.0.1:9/v1" in e.value.message


def test_the_endpoint_key_keeps_no_credentials():
    assert endpoint_key("https://user:sk-secret@api.example.com/v1/?key=sk-2#x", "m") == "https://api.example.com/v1 m"


def test_the_request_settings_their_manifest_entries_and_the_flags_agree():
    from pathlib import Path

    from cutegen.settings import CHOICES, Settings

    manifest = json.loads((Path(__file__).resolve().parents[2] / "vscode-client/package.json").read_text())
    props = manifest["contributes"]["configuration"]["properties"]
    defaults = Settings()
    for name in ("llm_token_parameter", "llm_send_temperature", "llm_reasoning_effort", "llm_stream"):
        prop = props[Settings.name_of(defaults, name)]
        assert tuple(prop["enum"]) == CHOICES[name] and prop["default"] == getattr(defaults, name), name
        s, problems = Settings.from_dict({Settings.name_of(defaults, name).removeprefix("cutegen."): "bogus"})
        assert getattr(s, name) == getattr(defaults, name) and "must be one of" in problems[0]
    cli = Settings()
    cli.interface = "cli"
    assert cli.name_of("llm_token_parameter") == "--llm-token-parameter"
    assert cli.name_of("llm_reasoning_effort") == "--llm-reasoning-effort"
