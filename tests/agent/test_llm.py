"""The LLM client against the scripted endpoint over real HTTP, with faults injected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from cutegen.agent.llm import LLMClient, LLMError
from cutegen.settings import Settings
from tests.support.llm import KEY, KEY_ENV, llm_settings

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
HI = [{"role": "user", "content": "TASK: hello"}]


def test_reply_usage_and_the_key_only_in_the_header(scripted):
    server = scripted([{"reply": "hello there"}])
    client = LLMClient(llm_settings(server.url, temperature=0.3, max_tokens=77))
    reply = client.chat(HI)
    assert reply.text == "hello there" and reply.finish_reason == "stop"
    assert reply.usage.calls == 1 and reply.usage.attempts == 1
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    req = server.requests[0]
    assert req["authorized"] and req["temperature"] == 0.3 and req["max_tokens"] == 77
    assert KEY not in json.dumps(server.requests)  # the log keeps no Authorization header


def test_timeouts_429_5xx_and_garbage_are_retried(scripted, monkeypatch):
    monkeypatch.setattr("cutegen.agent.llm.BACKOFF_BASE_S", 0.05)  # the backoff's length is not under test
    server = scripted([
        {"delay": 3.0, "reply": "too late"},  # beyond llm_timeout=1
        {"status": 429, "headers": {"Retry-After": "0.2"}},
        {"status": 503},
        {"raw_body": "<html>502 bad gateway</html>"},
        {"raw_body": "{\"unexpected\": true}"},
        {"reply": "finally"},
    ])
    client = LLMClient(llm_settings(server.url, llm_timeout=1.0, llm_retries=5))
    started = time.monotonic()
    reply = client.chat(HI)
    assert reply.text == "finally" and reply.usage.attempts == 6
    assert time.monotonic() - started < 20


def test_gives_up_plainly_after_the_retries(scripted):
    server = scripted([{"status": 500}] * 3)
    client = LLMClient(llm_settings(server.url, llm_retries=2))
    with pytest.raises(LLMError) as e:
        client.chat(HI)
    assert e.value.kind == "server" and "HTTP 500" in e.value.message and "after 3 attempts" in e.value.message
    assert server.remaining() == 0


def test_a_long_retry_after_is_reported_not_waited_out(scripted):
    server = scripted([{"status": 429, "headers": {"Retry-After": "600"}}])
    client = LLMClient(llm_settings(server.url))
    started = time.monotonic()
    with pytest.raises(LLMError) as e:
        client.chat(HI)
    assert e.value.kind == "rate-limit" and "600 s" in e.value.message
    assert time.monotonic() - started < 5


def test_nothing_hangs_on_a_silent_endpoint(scripted):
    server = scripted([{"delay": 30.0, "reply": "x"}] * 2)
    client = LLMClient(llm_settings(server.url, llm_timeout=0.5, llm_retries=1))
    started = time.monotonic()
    with pytest.raises(LLMError) as e:
        client.chat(HI)
    assert e.value.kind == "timeout" and "cutegen.llmTimeout" in e.value.message
    assert time.monotonic() - started < 5


def test_cancel_stops_the_backoff(scripted):
    server = scripted([{"status": 429, "headers": {"Retry-After": "20"}}, {"reply": "late"}])
    client = LLMClient(llm_settings(server.url))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(LLMError) as e:
        client.chat(HI, cancel=cancel)
    assert e.value.kind == "cancelled" and time.monotonic() - started < 5


def test_a_wrong_key_is_named_by_its_variable_never_shown(scripted, monkeypatch):
    server = scripted([{"reply": "never"}])
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-999")
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings(server.url)).chat(HI)
    assert e.value.kind == "auth" and KEY_ENV in e.value.message and "sk-wrong" not in e.value.message


def test_not_configured_says_so():
    with pytest.raises(LLMError) as e:
        LLMClient(Settings())
    assert e.value.kind == "not-configured" and "llmBaseUrl" in e.value.message


def test_negative_retries_are_refused_naming_the_setting():
    """No request at all would be tried; a Settings built by any caller (not only the CLI's flag) is checked."""
    with pytest.raises(LLMError) as e:
        LLMClient(llm_settings("http://127.0.0.1:9/v1", llm_retries=-1))
    assert e.value.kind == "not-configured" and e.value.message == "cutegen.llmRetries must be a number ≥ 0, not -1"


def test_cut_off_reply_is_marked(scripted):
    server = scripted([{"reply": "```diff\n--- a/k.cu", "finish_reason": "length"}])
    reply = LLMClient(llm_settings(server.url)).chat(HI)
    assert reply.truncated


def test_scripted_server_as_a_program(tmp_path):
    """The contract the VS Code extension's tests rely on: URL first on stdout, no key in stderr."""
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"match": "second", "reply": "two"}, {"reply": "one"}]))
    env = {**os.environ, KEY_ENV: KEY}
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests/support/scripted_openai.py"), "--port", "0",
                             "--replies", str(replies)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        client = LLMClient(llm_settings(url))
        # entries are consumed in order among those that match: "first" skips the "second"-only entry
        assert client.chat([{"role": "user", "content": "first"}]).text == "one"
        assert client.chat([{"role": "user", "content": "the second"}]).text == "two"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert KEY not in err and "Bearer" not in err and '"request": 2' in err
