"""The LLM client: any OpenAI-compatible endpoint through the `openai` package.

Retries are ours, not the package's (max_retries=0): we decide what is worth a retry (timeouts,
429, 5xx, malformed replies), cap every wait so nothing hangs, stop early on cancel, and count each
attempt. The API key is read from the environment variable *named* in the settings; it is never
logged, shown, put in an error message or written anywhere (`secrets()` lets writers scrub it).
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import asdict, dataclass, field

from cutegen.sandbox import redact
from cutegen.settings import Settings

MAX_RETRY_AFTER_S = 30.0  # a Retry-After longer than this is reported, not waited out
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.5, 8.0
NO_KEY = "cutegen-no-key"  # local endpoints (vLLM, Ollama) take any key; the package insists on one


class LLMError(Exception):
    """A request that failed for good; `kind` names why, the message says it plainly (key-free)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


@dataclass
class Usage:
    calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wait_s: float = 0.0  # wall time spent waiting for the endpoint, retries and backoff included
    cost_usd: float = 0.0  # as the endpoint reports it (OpenRouter-style `usage.cost`); 0 when it does not

    def add(self, other: "Usage") -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)

    def to_json(self) -> dict:
        return {**asdict(self), "wait_s": round(self.wait_s, 3)}


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may not parse)


@dataclass
class Reply:
    text: str
    finish_reason: str
    model: str
    usage: Usage
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


def configured(settings: Settings) -> str | None:
    """None when an endpoint is configured, else the plain reason it is not."""
    if not settings.llm_base_url:
        return (f"no LLM endpoint is configured (set {settings.name_of('llm_base_url')} and "
                f"{settings.name_of('llm_model')})")
    if not settings.llm_model:
        return f"no LLM model is configured (set {settings.name_of('llm_model')})"
    return None


class LLMClient:
    def __init__(self, settings: Settings, *, environ=os.environ):
        why = configured(settings)
        if why:
            raise LLMError("not-configured", why)
        try:
            import openai
        except ImportError:
            raise LLMError("not-configured", "the `openai` package is not installed (pip install openai)") from None
        self._openai = openai
        self.settings = settings
        self._key = environ.get(settings.llm_api_key_env) or ""
        self._client = openai.OpenAI(base_url=settings.llm_base_url, api_key=self._key or NO_KEY,
                                     timeout=settings.llm_timeout, max_retries=0)

    def secrets(self) -> list[str]:
        return [self._key] if self._key else []

    def reach(self, timeout: float = 10.0) -> None:
        """One cheap request (the model list) so that an unreachable endpoint or a refused key is said before
        any build or measurement. An endpoint that answers at all, even 404 for the list, is reachable."""
        o, s = self._openai, self.settings
        try:
            self._client.with_options(timeout=min(timeout, s.llm_timeout)).models.list()
        except o.APIConnectionError:  # APITimeoutError is one
            raise LLMError("connection", f"cannot reach the LLM endpoint at {s.llm_base_url} (setting "
                                         f"{s.name_of('llm_base_url')})") from None
        except o.AuthenticationError:
            raise LLMError("auth", f"the LLM endpoint refused the key (HTTP 401): check the environment "
                                   f"variable {s.llm_api_key_env} (setting {s.name_of('llm_api_key_env')})") from None
        except (o.APIStatusError, o.APIResponseValidationError, ValueError, TypeError):
            pass  # it answered

    def chat(self, messages: list[dict], *, cancel: threading.Event | None = None, tools: list[dict] | None = None) -> Reply:
        """One completion; with `tools` (OpenAI function specs) the reply may hold tool calls instead
        of text. An endpoint that does not take tools fails with kind "no-tools" (not retried)."""
        s = self.settings
        usage, started = Usage(calls=1), time.monotonic()
        last: LLMError | None = None
        for attempt in range(s.llm_retries + 1):
            if cancel is not None and cancel.is_set():
                raise LLMError("cancelled", "cancelled")
            usage.attempts += 1
            try:
                reply = self._once(messages, tools)
            except LLMError as e:
                last = e
                wait = self._retry_wait(e, attempt)
                if wait is None or attempt == s.llm_retries:
                    break
                if cancel is not None and cancel.wait(wait):
                    raise LLMError("cancelled", "cancelled") from None
                if cancel is None:
                    time.sleep(wait)
                continue
            usage.prompt_tokens, usage.completion_tokens = reply.usage.prompt_tokens, reply.usage.completion_tokens
            usage.cost_usd = reply.usage.cost_usd
            usage.wait_s = time.monotonic() - started
            reply.usage = usage
            return reply
        usage.wait_s = time.monotonic() - started
        tries = f" (after {usage.attempts} attempt{'s' * (usage.attempts > 1)})" if usage.attempts > 1 else ""
        err = LLMError(last.kind, last.message + tries)
        err.usage = usage
        raise err

    # -- one request --------------------------------------------------------------------------

    def _once(self, messages: list[dict], tools: list[dict] | None = None) -> Reply:
        o, s = self._openai, self.settings
        extra = {"tools": tools, "tool_choice": "auto"} if tools else {}
        messages = redact.messages(messages, self.secrets())  # nothing secret-shaped leaves for the endpoint
        try:
            r = self._client.chat.completions.create(model=s.llm_model, messages=messages,
                                                     temperature=s.temperature, max_tokens=s.max_tokens, **extra)
        except o.APITimeoutError:
            raise LLMError("timeout", f"the LLM endpoint did not answer within {s.llm_timeout:.0f} s "
                                      f"(setting {s.name_of('llm_timeout')})") from None
        except o.RateLimitError as e:
            err = LLMError("rate-limit", "the LLM endpoint is rate-limiting requests (HTTP 429)")
            err.retry_after = _retry_after(e.response)
            raise err from None
        except o.AuthenticationError:
            raise LLMError("auth", f"the LLM endpoint refused the key (HTTP 401): check the environment "
                                   f"variable {s.llm_api_key_env} (setting {s.name_of('llm_api_key_env')})") from None
        except o.APIStatusError as e:
            if tools and e.status_code in (400, 404, 422, 501) and "tool" in _brief(e).lower():
                raise LLMError("no-tools", f"the LLM endpoint does not take tool calls (HTTP {e.status_code}: "
                                           f"{self._scrub(_brief(e))})") from None
            kind = "server" if e.status_code >= 500 else "refused"
            raise LLMError(kind, f"the LLM endpoint answered HTTP {e.status_code}: {self._scrub(_brief(e))}") from None
        except o.APIConnectionError:
            raise LLMError("connection", f"cannot reach the LLM endpoint at {s.llm_base_url}") from None
        except (o.APIResponseValidationError, ValueError, TypeError) as e:
            raise LLMError("malformed", f"the LLM endpoint sent a malformed reply ({type(e).__name__})") from None
        return self._read(r, bool(tools))

    def _read(self, r, tools: bool = False) -> Reply:
        """The text of a completion, or LLMError('malformed') for what is not one (garbage bodies
        that parse as JSON come back from the package as objects without choices)."""
        try:
            choice = r.choices[0]
            text = choice.message.content
            calls = [ToolCall(str(c.id), str(c.function.name), str(c.function.arguments or "{}"))
                     for c in (getattr(choice.message, "tool_calls", None) or []) if tools]
        except (AttributeError, IndexError, TypeError, KeyError):
            raise LLMError("malformed", "the LLM endpoint sent a malformed reply (no choices)") from None
        if calls:
            text = text if isinstance(text, str) else ""
        elif not isinstance(text, str) or not text.strip():
            raise LLMError("malformed", "the LLM endpoint sent an empty reply")
        u = getattr(r, "usage", None)
        usage = Usage(prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                      completion_tokens=int(getattr(u, "completion_tokens", 0) or 0),
                      cost_usd=float(getattr(u, "cost", 0) or 0))
        return Reply(text=text, finish_reason=str(getattr(choice, "finish_reason", "") or ""),
                     model=str(getattr(r, "model", "") or self.settings.llm_model), usage=usage, tool_calls=calls)

    def _retry_wait(self, e: LLMError, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when retrying cannot help."""
        if e.kind not in ("timeout", "rate-limit", "server", "malformed", "connection"):
            return None
        backoff = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt) * (0.75 + 0.5 * random.random())
        after = getattr(e, "retry_after", None)
        if after is None:
            return backoff
        if after > MAX_RETRY_AFTER_S:
            e.message += f"; it asks to wait {after:.0f} s, longer than CuTeGen waits ({MAX_RETRY_AFTER_S:.0f} s)"
            return None
        return max(after, 0.0)

    def _scrub(self, text: str) -> str:
        return scrub(text, self.secrets())


def scrub(text: str, secrets: list[str]) -> str:
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


def _retry_after(response) -> float | None:
    try:
        headers = response.headers
    except AttributeError:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            pass
    return None


def _brief(e) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        msg = (body.get("error") or {}).get("message") if isinstance(body.get("error"), dict) else body.get("message")
        if msg:
            return str(msg)[:200]
    return str(getattr(e, "message", "") or type(e).__name__)[:200]
