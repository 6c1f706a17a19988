"""What a chat request carries for one endpoint + model, and what the endpoint taught us about it.

Providers differ in the parameters they take. OpenAI's reasoning models (o-series, GPT-5) answer HTTP 400 to
`max_tokens` ("Use 'max_completion_tokens' instead") and to any temperature but their default; some
gateways refuse `reasoning_effort` or `stream_options`; some servers answer only with an event stream. With
the settings on "auto", such a refusal is learned from the endpoint's own answer -- the parameter mapped
(max_tokens → max_completion_tokens → no limit) or left out -- and the request is sent again, once per
lesson; the lesson is remembered for the endpoint + model in this process and in `.cutegen/llm-endpoints.json`
(StateDir.llm_endpoints), so the next request is right the first time. A value chosen in the settings is
sent as chosen: nothing is learned over it, and a refusal names the setting. Only the refusal's wording and
the endpoint's URL (without credentials or query) are kept; never the key.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit, urlunsplit

from cutegen.files import write_atomic
from cutegen.settings import Settings
from cutegen.state import StateDir

SCHEMA_VERSION = 1  # of llm-endpoints.json
TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")  # tried in this order; both refused: no limit sent
DROPPABLE = ("temperature", "reasoning_effort", "stream_options")  # left out once refused
SETTING_OF = {"max_tokens": "llm_token_parameter", "max_completion_tokens": "llm_token_parameter",
              "temperature": "llm_send_temperature", "reasoning_effort": "llm_reasoning_effort",
              "stream_options": "llm_stream"}
# The words refusals of a parameter use (OpenAI, Azure, vLLM, LiteLLM, pydantic-based servers). A 400 that
# names a parameter without them ("'max_tokens' is too large: 4096") is about its value, not about sending
# it, and is not learned from.
_REFUSED = re.compile(r"unsupported|not supported|unrecognized|unknown (parameter|argument|field|name)|"
                      r"not allowed|not permitted|does not support|extra (inputs|fields)|not (a )?valid parameter",
                      re.I)


@dataclass
class Lessons:
    """What one endpoint + model refused or needs."""

    refused: list[str] = field(default_factory=list)  # parameters it answered HTTP 400 to
    stream: bool = False  # it answers only with an event stream
    why: dict[str, str] = field(default_factory=dict)  # parameter (or "stream") → the endpoint's own words
    learned: float = 0.0  # time.time() of the last lesson


_SESSION: dict[str, Lessons] = {}  # this process's lessons (one CLI run, the language server's session)
_lock = threading.Lock()


def endpoint_key(base_url: str, model: str) -> str:
    """'<url> <model>', the URL without user, password, query or fragment (they may hold secrets)."""
    u = urlsplit(base_url or "")
    host = u.hostname or ""
    netloc = host + (f":{u.port}" if u.port else "")
    return f"{urlunsplit((u.scheme, netloc, u.path.rstrip('/'), '', ''))} {model}"


class Endpoint:
    def __init__(self, settings: Settings, state_dir: str | os.PathLike | None = None):
        self.settings = settings
        self.key = endpoint_key(settings.llm_base_url or "", settings.llm_model or "")
        self.path = StateDir(state_dir).llm_endpoints if state_dir is not None else None
        with _lock:
            if self.key not in _SESSION:
                _SESSION[self.key] = self._load() or Lessons()
            self.lessons = _SESSION[self.key]

    # -- what a request carries ---------------------------------------------------------------

    @property
    def token_parameter(self) -> str:
        chosen = self.settings.llm_token_parameter
        if chosen != "auto":
            return chosen
        return next((p for p in TOKEN_PARAMETERS if p not in self.lessons.refused), "none")

    @property
    def streams(self) -> bool:
        chosen = self.settings.llm_stream
        return chosen == "yes" or (chosen == "auto" and self.lessons.stream)

    def sends(self, name: str) -> bool:
        s = self.settings
        if name == "temperature" and s.llm_send_temperature != "auto":
            return s.llm_send_temperature == "yes"
        if name == "reasoning_effort" and s.llm_reasoning_effort == "off":
            return False
        return name not in self.lessons.refused

    def request(self, tools: list[dict] | None = None) -> dict:
        """The arguments of chat.completions.create, without the messages."""
        s = self.settings
        kwargs: dict = {"model": s.llm_model}
        if self.token_parameter != "none":
            kwargs[self.token_parameter] = s.max_tokens
        if self.sends("temperature"):
            kwargs["temperature"] = s.temperature
        if self.sends("reasoning_effort"):
            kwargs["reasoning_effort"] = s.llm_reasoning_effort
        if self.streams:
            kwargs["stream"] = True
            if self.sends("stream_options"):
                kwargs["stream_options"] = {"include_usage": True}  # token counts in the last chunk
        if tools:
            kwargs.update(tools=tools, tool_choice="auto")
        return kwargs

    # -- learning -------------------------------------------------------------------------------

    def refused_parameters(self, words: str, body, sent: dict) -> list[str]:
        """The parameters of `sent` a refusal (HTTP 400/422) names as not taken, by its `param` field or by
        its wording; [] when it names none (then it is about something else)."""
        names = [n for n in (*TOKEN_PARAMETERS, *DROPPABLE) if n in sent]
        error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
        param = error.get("param") if isinstance(error, dict) else None
        text = f"{words} {json.dumps(body, default=str) if body is not None else ''}"
        if param in names and _REFUSED.search(text):
            return [param]
        if not _REFUSED.search(text):
            return []
        return [n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", text)]

    def learn(self, names: list[str], words: str) -> tuple[str, str]:
        """Take the refusal of `names` (the endpoint's `words`) into account: (what changes for the next
        request, "") when something may change, else ("", the setting to change) when a value chosen in the
        settings is what the endpoint refuses."""
        fixed = [n for n in names if self._chosen(n)]
        if fixed:
            return "", self.settings.name_of(SETTING_OF[fixed[0]])
        new = [n for n in names if n not in self.lessons.refused]
        if not new:
            return "", ""
        before = self.token_parameter
        with _lock:
            self.lessons.refused += new
            self.lessons.why.update({n: words[:300] for n in new})
            self.lessons.learned = time.time()
        self._save()
        changes = [f"{before} → {self.token_parameter}" if n in TOKEN_PARAMETERS else f"{n} left out" for n in new]
        return (f"the endpoint refused {', '.join(new)} for model {self.settings.llm_model} ({words[:160]}); "
                f"sent again with {'; '.join(dict.fromkeys(changes))}, {self._where()}"), ""

    def learn_stream(self) -> str:
        with _lock:
            self.lessons.stream = True
            self.lessons.why["stream"] = "answered a plain request with an event stream (text/event-stream)"
            self.lessons.learned = time.time()
        self._save()
        return f"the endpoint answered with an event stream (SSE); asked again streaming, {self._where()}"

    def _chosen(self, name: str) -> bool:
        """Whether the settings chose what is sent for `name` (so it is not ours to change). A reasoning effort
        is asked for "where the endpoint takes it", and stream_options is ours: both may be left out."""
        if name in TOKEN_PARAMETERS:
            return self.settings.llm_token_parameter != "auto"
        return name == "temperature" and self.settings.llm_send_temperature == "yes"

    def _where(self) -> str:
        return f"remembered in {self.path}" if self.path is not None else "remembered for this session"

    # -- the file ---------------------------------------------------------------------------------

    def _read(self) -> dict:
        if self.path is None:  # no state dir: the lessons live for this session only
            return {}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        ok = isinstance(data, dict) and data.get("schema") == SCHEMA_VERSION and isinstance(data.get("endpoints"), dict)
        return data["endpoints"] if ok else {}

    def _load(self) -> Lessons | None:
        raw = self._read().get(self.key) if self.path is not None else None
        if not isinstance(raw, dict):
            return None
        try:
            return Lessons(refused=[str(x) for x in raw.get("refused", [])], stream=bool(raw.get("stream", False)),
                           why={str(k): str(v) for k, v in (raw.get("why") or {}).items()},
                           learned=float(raw.get("learned", 0.0)))
        except (TypeError, ValueError, AttributeError):
            return None  # a damaged entry is learned again

    def _save(self) -> None:
        """Merge this endpoint's lessons into the file (atomically: a concurrent reader sees old or new)."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _lock:
                endpoints = self._read()
                endpoints[self.key] = asdict(self.lessons)
                write_atomic(self.path, json.dumps({"schema": SCHEMA_VERSION, "endpoints": endpoints}, indent=1))
        except OSError:
            pass  # not writable: the lesson still holds for this session


def forget_session() -> None:
    """Drop this process's lessons (tests: each starts as a fresh process would)."""
    with _lock:
        _SESSION.clear()
