"""What goes to the LLM and into transcripts passes a redaction step: secret-shaped strings and the server's own
secret values are replaced; kernel code (every example the project ships) passes unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.sandbox import redact

ROOT = Path(__file__).resolve().parents[2]

SHAPES = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "anthropic": "sk-ant-api03-" + "x" * 30 + "12",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws access key id": "AKIA" + "IOSFODNN7EXAMPLE",
    "google": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "hugging face": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "slack": "xoxb-" + "123456789012-abcdefABCDEF",
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "pem": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "bearer": "Authorization: Bearer " + "abcdef0123456789ABCDEF",
    "assignment": 'db_password = "' + "hunter2hunter2x9y8z7" + '"',
}


@pytest.mark.parametrize("kind", list(SHAPES))
def test_secret_shapes_are_redacted(kind):
    secret = SHAPES[kind]
    out = redact.text(f"error: near `{secret}` in line 3")
    assert redact.MARK in out and out.startswith("error: near `") and out.endswith("` in line 3")
    assert "hunter2hunter2x9y8z7" not in out and "a1B2c3D4e5F6" not in out and "OPENSSH PRIVATE KEY-----\nb3" not in out


def test_the_configured_key_and_secret_named_variables_are_redacted_whatever_their_shape(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plainwordsecret")
    out = redact.text("key=correct horse battery staple; token plainwordsecret", ["correct horse battery staple"])
    assert "correct horse" not in out and "plainwordsecret" not in out and out.count(redact.MARK) == 2


def test_chat_messages_are_redacted_in_every_string_but_roles():
    chat = [{"role": "user", "content": f"see {SHAPES['github']}"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                                  "function": {"name": "check", "arguments": SHAPES["openai"]}}]}]
    out = redact.messages(chat)
    assert out[0] == {"role": "user", "content": f"see {redact.MARK}"} and chat[0]["content"].startswith("see ghp_")
    assert out[1]["tool_calls"][0]["function"]["arguments"] == redact.MARK and out[1]["tool_calls"][0]["id"] == "c1"


def test_kernel_sources_pass_unchanged():
    sources = [p for p in (ROOT / "examples").rglob("*") if p.suffix in (".cu", ".cuh", ".py")]
    sources += list((ROOT / "cute_knowledge").rglob("*.md"))
    assert len(sources) > 50
    changed = [str(p) for p in sources if redact.text(p.read_text()) != p.read_text()]
    assert not changed, changed
