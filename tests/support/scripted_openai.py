"""A scripted OpenAI-compatible endpoint: real HTTP for the real `openai` client, replies from a list.

    python tests/support/scripted_openai.py --port 0 --replies replies.json [--reasoning-model] [--sse-only]

prints `http://127.0.0.1:PORT/v1` as its first stdout line, then serves POST /v1/chat/completions.
`replies.json` is a list of entries, each consumed once, in order among those that match:

    {"match": "substring of the last user message" (optional: any),
     "reply": "assistant text", "status": 200, "delay": 0.0 (seconds before answering),
     "headers": {"Retry-After": "1"}, "raw_body": "sent instead of a proper JSON body (garbage)",
     "finish_reason": "stop" (or "length" for a reply cut off at max_tokens),
     "tool_calls": [{"name": "check", "arguments": {...}}] (answer with tool calls, finish_reason
                   "tool_calls"; the request must have offered tools),
     "match_also": ["more substrings", ...] (optional: each must be in the last user message too),
     "repeat": true (optional: never consumed, the same question always gets this answer, as a landscape does),
     "match_tool": "substring of the last tool result" (optional),
     "think": "reasoning" (the content starts with a <think>reasoning</think> block: DeepSeek-R1 or
              Qwen behind a plain chat template),
     "reasoning_content": "reasoning" (a separate message field, as DeepSeek's API and vLLM's
              reasoning parsers send it; streamed as delta.reasoning_content),
     "refusal": "text" (content null and a `refusal` string, as OpenAI answers a refused request),
     "reset_after": N (send the headers and N bytes of the body, then reset the connection)}

Endpoint-wide modes, as real providers behave:
  reasoning_model (--reasoning-model)  OpenAI's reasoning models: HTTP 400 for `max_tokens` ("Use
      'max_completion_tokens' instead") and for any temperature but 1, with OpenAI's own messages
  rejects_reasoning_effort (--rejects-reasoning-effort)  HTTP 400 for `reasoning_effort` (Azure's text)
  sse_only (--sse-only)  every completion is answered as an event stream (chunked SSE), asked or not
  tools_supported=False (--no-tools)  HTTP 400 for a request offering tools, vLLM's message
A request with `stream: true` gets a real chunked SSE stream (role, reasoning, content in pieces, tool-call
deltas, finish, a usage chunk when stream_options asks for one, [DONE]).

Faults are entries too: a `delay` beyond the client's timeout, `status` 429/500 with headers, a
`raw_body` of garbage, `reset_after`. Requests are logged to stderr (and kept in `requests`, with the
parameters each sent) without the Authorization header; with `expect_key`, another key gets 401.
Importable for pytest fixtures: `with ScriptedOpenAI(entries) as server: server.url`.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SENT_PARAMS = ("max_tokens", "max_completion_tokens", "temperature", "reasoning_effort", "stream", "stream_options")
PIECE = 24  # characters per streamed content delta: several deltas for any real reply

# The texts OpenAI's API answers a reasoning model's request with (recorded from the API's error bodies).
MAX_TOKENS_400 = {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                             "'max_completion_tokens' instead.", "type": "invalid_request_error",
                  "param": "max_tokens", "code": "unsupported_parameter"}


def temperature_400(value) -> dict:
    return {"message": f"Unsupported value: 'temperature' does not support {value} with this model. Only the "
                       "default (1) value is supported.", "type": "invalid_request_error", "param": "temperature",
            "code": "unsupported_value"}


EFFORT_400 = {"code": "BadRequest", "message": "Unrecognized request argument supplied: reasoning_effort",
              "param": None, "type": None}


class ScriptedOpenAI:
    def __init__(self, entries: list[dict], *, port: int = 0, expect_key: str | None = None, log=sys.stderr,
                 tools_supported: bool = True, reasoning_model: bool = False, sse_only: bool = False,
                 rejects_reasoning_effort: bool = False):
        self.tools_supported = tools_supported
        self.reasoning_model, self.sse_only = reasoning_model, sse_only
        self.rejects_reasoning_effort = rejects_reasoning_effort
        self.entries = [dict(e) for e in entries]
        self.used = [False] * len(self.entries)
        self.requests: list[dict] = []  # what each request asked (never its Authorization header)
        self.expect_key = expect_key
        self.log = log
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "ScriptedOpenAI":
        # A short poll: stop() (shutdown) waits for the loop's next poll, half a second at the default, in every test
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="scripted-openai")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ScriptedOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def remaining(self) -> int:
        return self.used.count(False)

    def take(self, last_user: str, last_tool: str = "") -> dict | None:
        with self._lock:
            for i, entry in enumerate(self.entries):
                if (not self.used[i] and entry.get("match", "") in last_user
                        and all(m in last_user for m in entry.get("match_also", ()))
                        and entry.get("match_tool", "") in last_tool):
                    self.used[i] = not entry.get("repeat", False)
                    return entry
        return None

    def refusal_of(self, body: dict) -> tuple[int, dict] | None:
        """The HTTP 400 this endpoint's mode gives the request's parameters, before any entry is used."""
        if self.reasoning_model and "max_tokens" in body:
            return 400, MAX_TOKENS_400
        if self.reasoning_model and "temperature" in body and body["temperature"] != 1:
            return 400, temperature_400(body["temperature"])
        if self.rejects_reasoning_effort and "reasoning_effort" in body:
            return 400, EFFORT_400
        return None


class _Reset(Exception):
    """The connection was reset on purpose (`reset_after`): nothing more is sent."""


def _handler(server: ScriptedOpenAI):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # the default prints headers nowhere, but keep stderr tidy
            pass

        def finish(self):
            try:
                super().finish()
            except OSError:
                pass  # a connection reset on purpose

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                return self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self):
            try:
                self._post()
            except _Reset:
                self.close_connection = True

        def _post(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request"}})
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            messages = body.get("messages") or []
            last_user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
            if isinstance(last_user, list):  # content parts
                last_user = " ".join(p.get("text", "") for p in last_user if isinstance(p, dict))
            last_tool = next((str(m.get("content") or "") for m in reversed(messages[-8:]) if m.get("role") == "tool"), "")
            auth = self.headers.get("Authorization") or ""
            tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
            record = {"time": time.time(), "model": body.get("model"), "stream": bool(body.get("stream")),
                      "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens"),
                      "params": {k: body[k] for k in SENT_PARAMS if k in body},
                      "messages": messages, "authorized": bool(auth), "tools": tools}
            server.requests.append(record)
            print(json.dumps({"request": len(server.requests), "model": record["model"], "params": record["params"],
                              "last_user": last_user[:120]}), file=server.log, flush=True)
            if server.expect_key is not None and auth != f"Bearer {server.expect_key}":
                return self._json(401, {"error": {"message": "invalid API key", "type": "invalid_request_error",
                                                  "code": "invalid_api_key"}})
            if tools and not server.tools_supported:
                return self._json(400, {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice '
                                                             'and --tool-call-parser to be set', "type": "BadRequestError"}})
            refused = server.refusal_of(body)
            if refused is not None:
                return self._json(refused[0], {"error": refused[1]})
            entry = server.take(last_user, last_tool if messages and messages[-1].get("role") == "tool" else "")
            if entry is None:
                return self._json(400, {"error": {"message": "scripted server: no reply left for this request",
                                                  "type": "invalid_request_error"}})
            if entry.get("delay"):
                time.sleep(float(entry["delay"]))
            status, headers = int(entry.get("status", 200)), entry.get("headers") or {}
            if "raw_body" in entry:
                return self._send(status, entry["raw_body"].encode(), "application/json", headers, entry)
            if status != 200:
                return self._json(status, {"error": {"message": entry.get("reply") or f"scripted status {status}",
                                                     "type": "server_error" if status >= 500 else "rate_limit"}},
                                  headers)
            if body.get("stream") or server.sse_only:
                return self._stream(entry, body, messages, headers)
            self._send(200, json.dumps(_completion(entry, body, messages)).encode(), "application/json", headers, entry)

        def _stream(self, entry, body, messages, headers):
            """A chunked event stream, as vLLM, Ollama and OpenAI send one."""
            events = [f"data: {json.dumps(c)}\n\n".encode() for c in _chunks(entry, body, messages)]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            for k, v in headers.items():
                self.send_header(k, str(v))
            self.end_headers()
            cut = entry.get("reset_after")
            for event in [*events, b"data: [DONE]\n\n"]:
                if cut is not None and cut < len(event):
                    self._write(f"{len(event):x}\r\n".encode() + event[:cut])
                    self._reset()
                cut = None if cut is None else cut - len(event)
                self._write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self._write(b"0\r\n\r\n")

        def _json(self, status, payload, headers=None):
            self._send(status, json.dumps(payload).encode(), "application/json", headers or {})

        def _send(self, status, data: bytes, content_type: str, headers: dict, entry: dict | None = None):
            cut = (entry or {}).get("reset_after")
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(data if cut is None else data[:cut])
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout fault): nothing to answer
            if cut is not None:
                self._reset()

        def _write(self, data: bytes) -> None:
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                raise _Reset from None

        def _reset(self):
            """Close with RST (SO_LINGER 0), as a crashed server or a proxy dropping the connection does."""
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            raise _Reset

    return Handler


def _content(entry: dict) -> str | None:
    if "refusal" in entry:
        return None
    reply = entry.get("reply", "")
    return f"<think>\n{entry['think']}\n</think>\n\n{reply}" if "think" in entry else reply


def _tool_calls(entry: dict, messages: list) -> list[dict]:
    calls = []
    for k, c in enumerate(entry.get("tool_calls") or []):
        args = c.get("arguments", {})
        calls.append({"id": c.get("id") or f"call_{len(messages)}_{k}", "type": "function",
                      "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}})
    return calls


def _usage(entry: dict, messages: list, calls: list) -> dict:
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
    text = (_content(entry) or entry.get("refusal", "")) + entry.get("reasoning_content", "")
    completion_tokens = len(text) // 4 + 1 + len(json.dumps(calls)) // 4 * bool(calls)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            **({"cost": entry["cost"]} if "cost" in entry else {})}  # OpenRouter-style reported cost


def _finish(entry: dict) -> str:
    return entry.get("finish_reason", "tool_calls" if entry.get("tool_calls") else "stop")


def _completion(entry: dict, body: dict, messages: list) -> dict:
    calls = _tool_calls(entry, messages)
    message = {"role": "assistant", "content": _content(entry)}
    if calls:
        message = {"role": "assistant", "content": _content(entry) or None, "tool_calls": calls}
    if "refusal" in entry:
        message["refusal"] = entry["refusal"]
    if "reasoning_content" in entry:
        message["reasoning_content"] = entry["reasoning_content"]
    return {
        "id": f"chatcmpl-scripted-{int(time.time() * 1000)}", "object": "chat.completion",
        "created": int(time.time()), "model": body.get("model") or "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(entry), "logprobs": None}],
        "usage": _usage(entry, messages, calls),
    }


def _chunks(entry: dict, body: dict, messages: list) -> list[dict]:
    """The completion as stream chunks: the role, reasoning and content in pieces, tool-call deltas, the finish."""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model") or "scripted"}

    def chunk(delta: dict, finish=None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    for field, text in (("reasoning_content", entry.get("reasoning_content")), ("content", _content(entry)),
                        ("refusal", entry.get("refusal"))):
        out += [chunk({field: text[i:i + PIECE]}) for i in range(0, len(text or ""), PIECE)]
    calls = _tool_calls(entry, messages)
    for k, c in enumerate(calls):
        args = c["function"]["arguments"]
        out.append(chunk({"tool_calls": [{"index": k, "id": c["id"], "type": "function",
                                          "function": {"name": c["function"]["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": k, "function": {"arguments": args[i:i + PIECE]}}]})
                for i in range(0, len(args), PIECE)]
    out.append(chunk({}, _finish(entry)))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append({**base, "choices": [], "usage": _usage(entry, messages, calls)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--replies", type=Path, required=True, help="JSON list of scripted entries")
    ap.add_argument("--expect-key-env", help="answer 401 unless the Bearer key equals this variable's value")
    ap.add_argument("--no-tools", action="store_true", help="answer requests that offer tools with HTTP 400")
    ap.add_argument("--reasoning-model", action="store_true",
                    help="answer max_tokens and a temperature other than 1 with HTTP 400, as OpenAI's reasoning models do")
    ap.add_argument("--rejects-reasoning-effort", action="store_true", help="answer reasoning_effort with HTTP 400")
    ap.add_argument("--sse-only", action="store_true", help="answer every completion as an event stream")
    args = ap.parse_args(argv)
    entries = json.loads(args.replies.read_text())
    if not isinstance(entries, list):
        print("error: --replies must hold a JSON list", file=sys.stderr)
        return 2
    import os

    key = os.environ.get(args.expect_key_env) if args.expect_key_env else None
    server = ScriptedOpenAI(entries, port=args.port, expect_key=key, tools_supported=not args.no_tools,
                            reasoning_model=args.reasoning_model, sse_only=args.sse_only,
                            rejects_reasoning_effort=args.rejects_reasoning_effort)
    print(server.url, flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
