"""A scripted OpenAI-compatible endpoint: real HTTP for the real `openai` client, replies from a list.

    python tests/support/scripted_openai.py --port 0 --replies replies.json

prints `http://127.0.0.1:PORT/v1` as its first stdout line, then serves POST /v1/chat/completions.
`replies.json` is a list of entries, each consumed once, in order among those that match:

    {"match": "substring of the last user message" (optional: any),
     "reply": "assistant text", "status": 200, "delay": 0.0 (seconds before answering),
     "headers": {"Retry-After": "1"}, "raw_body": "sent instead of a proper JSON body (garbage)",
     "finish_reason": "stop" (or "length" for a reply cut off at max_tokens),
     "tool_calls": [{"name": "check", "arguments": {...}}] (answer with tool calls, finish_reason
                   "tool_calls"; the request must have offered tools),
     "match_tool": "substring of the last tool result" (optional)}

With `tools_supported=False` (or `--no-tools`), a request that offers tools gets HTTP 400 with
vLLM's message for a server started without tool parsing, as such an endpoint answers.

Faults are entries too: a `delay` beyond the client's timeout, `status` 429/500 with headers, a
`raw_body` of garbage. Requests are logged to stderr (and kept in `requests`) without the
Authorization header; with `expect_key`, a request carrying another key gets 401.
Importable for pytest fixtures: `with ScriptedOpenAI(entries) as server: server.url`.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class ScriptedOpenAI:
    def __init__(self, entries: list[dict], *, port: int = 0, expect_key: str | None = None, log=sys.stderr,
                 tools_supported: bool = True):
        self.tools_supported = tools_supported
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
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True, name="scripted-openai")
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
                if not self.used[i] and entry.get("match", "") in last_user and entry.get("match_tool", "") in last_tool:
                    self.used[i] = True
                    return entry
        return None


def _handler(server: ScriptedOpenAI):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # the default prints headers nowhere, but keep stderr tidy
            pass

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                return self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self):
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
                      "messages": messages, "authorized": bool(auth), "tools": tools}
            server.requests.append(record)
            print(json.dumps({"request": len(server.requests), "model": record["model"],
                              "last_user": last_user[:120]}), file=server.log, flush=True)
            if server.expect_key is not None and auth != f"Bearer {server.expect_key}":
                return self._json(401, {"error": {"message": "invalid API key", "type": "invalid_request_error",
                                                  "code": "invalid_api_key"}})
            if tools and not server.tools_supported:
                return self._json(400, {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice '
                                                             'and --tool-call-parser to be set', "type": "BadRequestError"}})
            entry = server.take(last_user, last_tool if messages and messages[-1].get("role") == "tool" else "")
            if entry is None:
                return self._json(400, {"error": {"message": "scripted server: no reply left for this request",
                                                  "type": "invalid_request_error"}})
            if entry.get("delay"):
                time.sleep(float(entry["delay"]))
            status, headers = int(entry.get("status", 200)), entry.get("headers") or {}
            if "raw_body" in entry:
                return self._send(status, entry["raw_body"].encode(), "application/json", headers)
            if status != 200:
                return self._json(status, {"error": {"message": entry.get("reply") or f"scripted status {status}",
                                                     "type": "server_error" if status >= 500 else "rate_limit"}},
                                  headers)
            if body.get("stream"):
                return self._stream(entry, body, headers)
            self._json(200, _completion(entry, body, messages), headers)

        def _stream(self, entry, body, headers):
            chunk = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": body.get("model") or "scripted",
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": entry.get("reply", "")},
                                  "finish_reason": entry.get("finish_reason", "stop")}]}
            data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            self._send(200, data, "text/event-stream", headers)

        def _json(self, status, payload, headers=None):
            self._send(status, json.dumps(payload).encode(), "application/json", headers or {})

        def _send(self, status, data: bytes, content_type: str, headers: dict):
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout fault): nothing to answer

    return Handler


def _completion(entry: dict, body: dict, messages: list) -> dict:
    reply = entry.get("reply", "")
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
    completion_tokens = len(reply) // 4 + 1
    message = {"role": "assistant", "content": reply}
    finish = entry.get("finish_reason", "stop")
    if entry.get("tool_calls"):
        calls = []
        for k, c in enumerate(entry["tool_calls"]):
            args = c.get("arguments", {})
            calls.append({"id": c.get("id") or f"call_{len(messages)}_{k}", "type": "function",
                          "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}})
        message = {"role": "assistant", "content": reply or None, "tool_calls": calls}
        finish = entry.get("finish_reason", "tool_calls")
        completion_tokens += len(json.dumps(calls)) // 4
    return {
        "id": f"chatcmpl-scripted-{int(time.time() * 1000)}", "object": "chat.completion",
        "created": int(time.time()), "model": body.get("model") or "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--replies", type=Path, required=True, help="JSON list of scripted entries")
    ap.add_argument("--expect-key-env", help="answer 401 unless the Bearer key equals this variable's value")
    ap.add_argument("--no-tools", action="store_true", help="answer requests that offer tools with HTTP 400")
    args = ap.parse_args(argv)
    entries = json.loads(args.replies.read_text())
    if not isinstance(entries, list):
        print("error: --replies must hold a JSON list", file=sys.stderr)
        return 2
    import os

    key = os.environ.get(args.expect_key_env) if args.expect_key_env else None
    server = ScriptedOpenAI(entries, port=args.port, expect_key=key, tools_supported=not args.no_tools)
    print(server.url, flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
