"""The LLM client: any OpenAI-compatible endpoint through the `openai` package.

Retries are ours, not the package's (max_retries=0): we decide what is worth a retry (timeouts,
429, 5xx, malformed replies, a connection cut mid-reply), cap every wait so nothing hangs, stop early on
cancel, and count each attempt. What is deterministic is never retried: a refusal by the model, a reply
cut at the token limit before any answer, a 400. A 400 that names a parameter the endpoint does not take
(reasoning models: max_tokens, temperature) is learned from instead, and an endpoint that answers only with
an event stream is streamed from (agent/endpoint.py); replies are read by agent/reply.py, which keeps the
model's reasoning apart from its answer. The API key is read from the environment variable *named* in the
settings; it is never logged, shown, put in an error message or written anywhere (`secrets()` lets writers
scrub it).
"""

from __future__ import annotations

import os
import random
import threading
import time

from cutegen.agent.endpoint import Endpoint
from cutegen.agent.reply import LLMError, Reply, ToolCall, Usage, from_completion, from_stream
from cutegen.sandbox import redact
from cutegen.settings import Settings

# the client, and the reply model (agent/reply.py) re-exported
__all__ = ["LLMClient", "LLMError", "Reply", "ToolCall", "Usage", "configured", "cut_off", "scrub"]

MAX_RETRY_AFTER_S = 30.0  # a Retry-After longer than this is reported, not waited out
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.5, 8.0
NO_KEY = "cutegen-no-key"  # local endpoints (vLLM, Ollama) take any key; the package insists on one
MAX_LESSONS = 6  # parameters (and streaming) one request may learn about: each is one more request, once
RETRIED = ("timeout", "rate-limit", "server", "malformed", "connection")


def configured(settings: Settings) -> str | None:
    """None when an endpoint is configured, else the plain reason it is not."""
    if not settings.llm_base_url:
        return (f"no LLM endpoint is configured (set {settings.name_of('llm_base_url')} and "
                f"{settings.name_of('llm_model')})")
    if not settings.llm_model:
        return f"no LLM model is configured (set {settings.name_of('llm_model')})"
    return None


def cut_off(settings: Settings) -> str:
    """How every message says a reply hit the token limit."""
    return f"cut off at the token limit ({settings.name_of('max_tokens')} = {settings.max_tokens})"


class LLMClient:
    def __init__(self, settings: Settings, *, environ=os.environ, state_dir: str | os.PathLike | None = None):
        why = configured(settings)
        if why:
            raise LLMError("not-configured", why)
        if settings.llm_retries < 0:  # no try would be made; the CLI and the editor's setting refuse it too
            raise LLMError("not-configured", f"{settings.name_of('llm_retries')} must be a number ≥ 0, "
                                             f"not {settings.llm_retries}")
        try:
            import openai
        except ImportError:
            raise LLMError("not-configured", "the `openai` package is not installed (pip install openai)") from None
        self._openai = openai
        self.settings = settings
        self.endpoint = Endpoint(settings, state_dir)  # what requests carry; lessons under state_dir
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
            raise LLMError("auth", self._auth_message()) from None
        except (o.APIStatusError, o.APIResponseValidationError, ValueError, TypeError):
            pass  # it answered

    def chat(self, messages: list[dict], *, cancel: threading.Event | None = None,
             tools: list[dict] | None = None) -> Reply:
        """One completion; with `tools` (OpenAI function specs) the reply may hold tool calls instead
        of text. An endpoint that does not take tools fails with kind "no-tools" (not retried)."""
        s = self.settings
        usage, started = Usage(calls=1), time.monotonic()
        last: LLMError | None = None
        for attempt in range(s.llm_retries + 1):
            if cancel is not None and cancel.is_set():
                raise LLMError("cancelled", "cancelled")
            try:
                reply = self._once(messages, tools, usage, cancel)
            except LLMError as e:
                if e.kind == "cancelled":
                    raise
                last = e
                wait = self._retry_wait(e, attempt)
                if wait is None or attempt == s.llm_retries:
                    break
                if cancel is not None and cancel.wait(wait):
                    raise LLMError("cancelled", "cancelled") from None
                if cancel is None:
                    time.sleep(wait)
                continue
            u = reply.usage
            usage.prompt_tokens, usage.completion_tokens = u.prompt_tokens, u.completion_tokens
            usage.reasoning_tokens, usage.cost_usd = u.reasoning_tokens, u.cost_usd
            usage.wait_s = time.monotonic() - started
            reply.usage = usage
            return reply
        usage.wait_s = time.monotonic() - started
        if last is None:  # never: llm_retries >= 0 (__init__), so the loop tried once, and only an error leaves it
            raise LLMError("not-configured", f"{s.name_of('llm_retries')} must be a number ≥ 0, not {s.llm_retries}")
        tries = f" (after {usage.attempts} attempt{'s' * (usage.attempts > 1)})" if usage.attempts > 1 else ""
        err = LLMError(last.kind, last.message + tries)
        err.usage = usage
        raise err

    # -- one request --------------------------------------------------------------------------

    def _once(self, messages: list[dict], tools: list[dict] | None, usage: Usage,
              cancel: threading.Event | None) -> Reply:
        """One completion: a request, and one more for each thing the endpoint teaches (a parameter it
        refuses, its event stream); each lesson once, so this ends."""
        notes: list[str] = []
        for _ in range(MAX_LESSONS + 1):
            usage.attempts += 1
            sent = self.endpoint.request(tools)
            outcome = self._request(messages, sent, bool(tools), cancel)
            if isinstance(outcome, Reply):
                outcome.notes = notes + outcome.notes
                return outcome
            notes.append(outcome)
        raise LLMError("refused", f"the LLM endpoint kept refusing the request's parameters ({'; '.join(notes)})")

    def _request(self, messages: list[dict], sent: dict, tools: bool, cancel: threading.Event | None) -> Reply | str:
        """One HTTP request: the reply, or (str) what was learned and changes before the next request."""
        o, s = self._openai, self.settings
        messages = redact.messages(messages, self.secrets())  # nothing secret-shaped leaves for the endpoint
        try:
            # Every request to the endpoint leaves here, carrying exactly `messages`.
            # The package types messages as TypedDicts (its typing only): ours are the same JSON, as plain dicts.
            r = self._client.chat.completions.create(messages=messages, **sent)  # type: ignore[arg-type]
            model = s.llm_model or ""  # never empty: LLMClient() refuses settings without a model
            if sent.get("stream"):
                return from_stream(self._guarded(r, cancel), tools=tools, model=model)
            return from_completion(r, tools=tools, model=model)
        except LLMError as e:
            if e.kind == "streamed" and s.llm_stream == "auto":
                return self.endpoint.learn_stream()
            raise self._named(e) from None
        except o.APITimeoutError:
            raise LLMError("timeout", f"the LLM endpoint did not answer within {s.llm_timeout:.0f} s "
                                      f"(setting {s.name_of('llm_timeout')})") from None
        except o.RateLimitError as e:
            err = LLMError("rate-limit", "the LLM endpoint is rate-limiting requests (HTTP 429)")
            err.retry_after = _retry_after(e.response)
            raise err from None
        except o.AuthenticationError:
            raise LLMError("auth", self._auth_message()) from None
        except o.APIStatusError as e:
            return self._refused(e, sent, tools)
        except o.APIConnectionError as e:
            raise self._connection(e) from None
        except o.APIResponseValidationError as e:
            raise LLMError("malformed", f"the LLM endpoint sent a malformed reply ({type(e).__name__})") from None
        except o.APIError as e:  # an error event inside a stream
            raise LLMError("server",
                           f"the LLM endpoint reported an error in its stream: {self._scrub(_brief(e))}") from None
        except (ValueError, TypeError) as e:
            raise LLMError("malformed", f"the LLM endpoint sent a malformed reply ({type(e).__name__})") from None

    def _refused(self, e, sent: dict, tools: bool) -> str:
        """An HTTP error status: a lesson when it refuses a parameter we may change, else the error."""
        brief, code = self._scrub(_brief(e)), e.status_code
        if code in (400, 422):
            names = self.endpoint.refused_parameters(brief, getattr(e, "body", None), sent)
            lesson, setting = self.endpoint.learn(names, brief) if names else ("", "")
            if lesson:
                return lesson
            if setting:
                raise LLMError("refused", f"the LLM endpoint answered HTTP {code}: {brief} (it is sent because of "
                                          f"the setting {setting}: set it to auto)")
        if tools and code in (400, 404, 422, 501) and "tool" in brief.lower():
            raise LLMError("no-tools", f"the LLM endpoint does not take tool calls (HTTP {code}: {brief})")
        kind = "server" if code >= 500 else "refused"
        raise LLMError(kind, f"the LLM endpoint answered HTTP {code}: {brief}")

    def _connection(self, e) -> LLMError:
        """A connection that failed: never reached, or cut while the reply was coming (a reset, a body
        shorter than announced), which a retry may get past."""
        s, cause = self.settings, e.__cause__ or e.__context__
        cut = type(cause).__name__ in ("ReadError", "RemoteProtocolError") or isinstance(cause, ConnectionError)
        if cut:
            return LLMError("connection", f"the LLM endpoint at {s.llm_base_url} closed the connection before its "
                                          f"reply was complete ({type(cause).__name__}: "
                                          f"{self._scrub(str(cause))[:120]})")
        return LLMError("connection", f"cannot reach the LLM endpoint at {s.llm_base_url}")

    def _named(self, e: LLMError) -> LLMError:
        """The error with the setting that decides it named, where one does."""
        s = self.settings
        if e.kind == "truncated":  # reply.py said it first, without the setting
            e.message = e.message.replace("cut off at the token limit", cut_off(s))
        elif e.kind == "streamed":
            e.kind = "refused"
            e.message += (f" although streaming is off (setting {s.name_of('llm_stream')} = {s.llm_stream}): set it to "
                          "auto or yes")
        return LLMError(e.kind, e.message)

    def _guarded(self, stream, cancel: threading.Event | None):
        """The stream's chunks, stopped by a cancel or by the request's time limit (a stream that trickles
        would never trip the per-read timeout)."""
        deadline = time.monotonic() + self.settings.llm_timeout
        try:
            for chunk in stream:
                if cancel is not None and cancel.is_set():
                    raise LLMError("cancelled", "cancelled")
                if time.monotonic() > deadline:
                    raise LLMError("timeout", f"the LLM endpoint's stream did not end within "
                                              f"{self.settings.llm_timeout:.0f} s (setting "
                                              f"{self.settings.name_of('llm_timeout')})")
                yield chunk
        finally:
            stream.close()

    def _auth_message(self) -> str:
        s = self.settings
        return (f"the LLM endpoint refused the key (HTTP 401): check the environment variable {s.llm_api_key_env} "
                f"(setting {s.name_of('llm_api_key_env')})")

    def _retry_wait(self, e: LLMError, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when retrying cannot help."""
        if e.kind not in RETRIED:
            return None
        backoff = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt) * (0.75 + 0.5 * random.random())
        after = e.retry_after
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
