"""What leaves for the LLM, or lands in a transcript, passes here first: secret-shaped strings are replaced.

A compiler error can quote any file a compile could read, a candidate's output can print anything it found;
the jail keeps secrets out of reach, and this is the second line: the configured key's value and the values
of the server's secret-named environment variables wherever they appear, and strings shaped like API keys,
tokens and private keys (OpenAI, Anthropic, GitHub, GitLab, Slack, AWS, Google, Hugging Face, JWTs, PEM
blocks, `Bearer ...`, `api_key = "..."`). Kernel code does not look like these, so prompts keep their code.
"""

from __future__ import annotations

import os
import re

MARK = "[redacted]"
_SHAPES = re.compile("|".join([
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b", r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    r"\bglpat-[A-Za-z0-9_\-]{20,}\b", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", r"\bAIza[0-9A-Za-z_\-]{35}\b", r"\bhf_[A-Za-z0-9]{30,}\b",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r"(?i:\bBearer\s+[A-Za-z0-9._~+/\-]{16,}=*)",
]))
# `api_key = "..."`, `SECRET: ...`, `password=...` with a value that looks generated (letters and digits, long).
_ASSIGNED = re.compile(r"(?i)\b([\w.\-]*(?:api[_-]?key|secret|token|passw(?:or)?d|credential|auth)[\w.\-]*)"
                       r"(\s*[:=]\s*[\"']?)([A-Za-z0-9_+/=.\-]{16,})")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.I)


def text(value: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`value` with every secret (given, or in the environment) and every secret-shaped string replaced."""
    for s in sorted({*secrets, *_environment_secrets()}, key=len, reverse=True):
        if s and len(s) >= 8:
            value = value.replace(s, MARK)
    value = _SHAPES.sub(MARK, value)
    return _ASSIGNED.sub(lambda m: m.group(1) + m.group(2) + (MARK if _generated(m.group(3)) else m.group(3)), value)


def messages(chat: list[dict], secrets: list[str] | tuple[str, ...] = ()) -> list[dict]:
    """A copy of chat messages with every string in them redacted (content, tool calls and their arguments)."""
    return [_deep(m, secrets) for m in chat]


def _deep(value, secrets):
    if isinstance(value, str):
        return text(value, secrets)
    if isinstance(value, dict):
        return {k: (v if k in ("role", "tool_call_id", "type", "id") else _deep(v, secrets)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_deep(v, secrets) for v in value]
    return value


def _environment_secrets() -> list[str]:
    return [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8]


def _generated(value: str) -> bool:
    """A value that looks generated, not a name from code: at least three digits and three letters."""
    return len(re.findall(r"\d", value)) >= 3 and len(re.findall(r"[A-Za-z]", value)) >= 3
