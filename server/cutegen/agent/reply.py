"""A reply as CuTeGen reads it, from a completion or an event stream of the `openai` package.

The answer is kept apart from the model's reasoning: a `reasoning_content` (DeepSeek's API, vLLM's reasoning
parsers) or `reasoning` field (OpenRouter, Ollama), and `<think>`/`<thinking>`/`<reasoning>` blocks in the
content (DeepSeek-R1 or Qwen behind a plain chat template, or a template that opens the block in the prompt
so only `</think>` arrives). What is shown and parsed is the answer; the reasoning goes to the transcript.
A reply without an answer says why: a refusal (deterministic, never retried), the token limit reached
first, a content filter, only reasoning, or an empty reply (which may be transient).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field


class LLMError(Exception):
    """A request that failed for good; `kind` names why, the message says it plainly (key-free)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message
        self.usage: Usage | None = None  # what the failed request cost (LLMClient.chat sets it after its tries)
        self.retry_after: float | None = None  # seconds the endpoint asked to wait (a 429's Retry-After)


@dataclass
class Usage:
    calls: int = 0
    attempts: int = 0  # HTTP requests, retries and parameter adaptations included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # of completion_tokens, as the endpoint reports them (hidden reasoning)
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
    text: str  # the answer: what is shown and parsed, without the reasoning
    finish_reason: str
    model: str
    usage: Usage
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""  # the model's reasoning, for the transcript only
    streamed: bool = False
    notes: list[str] = field(default_factory=list)  # what the client learned on the way (endpoint.py)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def transcript(self) -> dict:
        """What a transcript step keeps of the reply besides its text."""
        return {"reasoning": self.reasoning or None, "streamed": self.streamed, "llm_notes": self.notes or None,
                "reasoning_tokens": self.usage.reasoning_tokens or None}


_TAGS = r"(think|thinking|reasoning)"
_BLOCK = re.compile(rf"<{_TAGS}>(.*?)</\1>", re.S | re.I)
_CLOSE = re.compile(rf"</{_TAGS}>", re.I)
_OPEN = re.compile(rf"<{_TAGS}>", re.I)


def split_reasoning(text: str) -> tuple[str, str, bool]:
    """(the answer, the reasoning, whether a reasoning block is left open: the reply ends inside it)."""
    reasoning = [m.group(2).strip() for m in _BLOCK.finditer(text)]
    answer = _BLOCK.sub("", text)
    close = _CLOSE.search(answer)  # the template opened the block in the prompt: all before it is reasoning
    if close:
        reasoning.insert(0, answer[:close.start()].strip())
        answer = answer[close.end():]
    opened = _OPEN.search(answer)
    if opened:
        reasoning.append(answer[opened.end():].strip())
        answer = answer[:opened.start()]
    if reasoning:
        answer = answer.lstrip("\n")
    return answer, "\n\n".join(r for r in reasoning if r), opened is not None


def looks_streamed(body: str) -> bool:
    """A body of server-sent events (what an SSE-only endpoint answers a plain request with)."""
    head = body.lstrip()[:200]
    return head.startswith(("data:", "event:", ": ")) or "\ndata:" in head


def from_completion(r, *, tools: bool, model: str) -> Reply:
    """A non-streamed completion (an object the package parsed, or the text of a body it could not)."""
    if isinstance(r, str):
        kind = "streamed" if looks_streamed(r) else "malformed"
        raise LLMError(kind, "the LLM endpoint answered with an event stream (SSE) to a plain request"
                       if kind == "streamed" else "the LLM endpoint sent a malformed reply (not JSON)")
    try:
        choice = r.choices[0]
        message = choice.message
        content, refusal = message.content, getattr(message, "refusal", None)
        calls = [ToolCall(str(c.id), str(c.function.name), str(c.function.arguments or "{}"))
                 for c in (getattr(message, "tool_calls", None) or []) if tools]
    except (AttributeError, IndexError, TypeError, KeyError):
        raise LLMError("malformed", "the LLM endpoint sent a malformed reply (no choices)") from None
    field_reasoning = _field(message, "reasoning_content") or _field(message, "reasoning")
    return _reply(content, field_reasoning, refusal, calls, getattr(choice, "finish_reason", None),
                  _usage(getattr(r, "usage", None)), str(getattr(r, "model", "") or model), streamed=False)


def from_stream(chunks, *, tools: bool, model: str) -> Reply:
    """An event stream of chunks, put together: content, reasoning and refusal deltas, tool-call deltas by
    index, the finish reason, the usage chunk (when the endpoint sends one)."""
    content, reasoning, refusal = [], [], []
    calls: dict[int, dict] = {}
    finish, usage, seen_model = None, None, ""
    for chunk in chunks:
        seen_model = getattr(chunk, "model", None) or seen_model
        usage = getattr(chunk, "usage", None) or usage
        for choice in (getattr(chunk, "choices", None) or [])[:1]:
            d = choice.delta
            content.append(getattr(d, "content", None) or "")
            reasoning.append(_field(d, "reasoning_content") or _field(d, "reasoning"))
            refusal.append(getattr(d, "refusal", None) or "")
            for c in (getattr(d, "tool_calls", None) or []) if tools else []:
                acc = calls.setdefault(int(c.index or 0), {"id": "", "name": "", "arguments": ""})
                acc["id"] = c.id or acc["id"]
                if c.function is not None:
                    acc["name"] += c.function.name or ""
                    acc["arguments"] += c.function.arguments or ""
            finish = getattr(choice, "finish_reason", None) or finish
    if finish is None:
        raise LLMError("connection", "the LLM endpoint's stream ended before the reply was complete (no "
                                     "finish_reason)")
    found = [ToolCall(c["id"], c["name"], c["arguments"] or "{}") for _, c in sorted(calls.items())]
    return _reply("".join(content), "".join(reasoning), "".join(refusal) or None, found, finish, _usage(usage),
                  seen_model or model, streamed=True)


def _reply(content, field_reasoning: str, refusal, calls: list[ToolCall], finish, usage: Usage, model: str, *,
           streamed: bool) -> Reply:
    text = content if isinstance(content, str) else ""
    answer, think, unclosed = split_reasoning(text)
    reasoning = "\n\n".join(r for r in (field_reasoning, think) if r)
    finish = str(finish or "")
    if not calls and not answer.strip():
        raise _no_answer(refusal, finish, bool(reasoning), unclosed)
    return Reply(text=answer, finish_reason=finish, model=model, usage=usage, tool_calls=calls,
                 reasoning=reasoning, streamed=streamed)


def _no_answer(refusal, finish: str, reasoned: bool, unclosed: bool) -> LLMError:
    """Why a reply holds no answer, as a person should read it."""
    if refusal:
        return LLMError("refusal", f"the model refused the request: \u201c{str(refusal).strip()[:500]}\u201d")
    if finish == "length":
        spent = " (all of it went to the model's reasoning)" if reasoned or unclosed else ""
        return LLMError("truncated", f"the reply was cut off at the token limit before any answer{spent}")
    if finish == "content_filter":
        return LLMError("content-filter", "the endpoint's content filter stopped the reply before any answer")
    if unclosed:
        return LLMError("truncated", "the reply ends inside the model's reasoning (its <think> block is never "
                                     "closed): it was cut off before any answer")
    if reasoned:
        return LLMError("no-answer", "the model sent only its reasoning and no answer")
    return LLMError("malformed", "the LLM endpoint sent an empty reply")


def _field(obj, name: str) -> str:
    """An extra field the package keeps but does not declare (pydantic's extras)."""
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value if isinstance(value, str) else ""


def _usage(u) -> Usage:
    details = getattr(u, "completion_tokens_details", None)
    return Usage(prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                 completion_tokens=int(getattr(u, "completion_tokens", 0) or 0),
                 reasoning_tokens=int(getattr(details, "reasoning_tokens", 0) or 0),
                 cost_usd=float(getattr(u, "cost", 0) or 0))
