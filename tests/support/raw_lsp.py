"""A raw JSON-RPC client for `cutegen lsp` over stdio: it sends params exactly as given (wrong types, missing
fields, garbage), which a typed client such as pytest-lsp cannot. Answers the server's own requests
(workspace/configuration with empty settings, anything else with null) and keeps every notification.

    async with RawClient(workspace, env) as c:
        answer = await c.request("textDocument/hover", {...})   # {"result": ...} or {"error": {...}}
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path


class NoAnswer(AssertionError):
    pass


class RawClient:
    def __init__(self, workspace: Path, env: dict | None = None, timeout: float = 20.0) -> None:
        self.workspace = workspace
        self.env = env
        self.timeout = timeout
        self.notifications: list[dict] = []
        self.stderr = b""
        self.capabilities: dict = {}
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None

    async def __aenter__(self) -> "RawClient":
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cutegen", "lsp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self.env)
        self._reader = asyncio.create_task(self._read())
        self._stderr = asyncio.create_task(self._proc.stderr.read())
        uri = self.workspace.as_uri()
        answer = await self.request("initialize", {"processId": None, "rootUri": uri, "capabilities": {},
                                                   "workspaceFolders": [{"uri": uri, "name": "ws"}]})
        self.capabilities = answer["result"]["capabilities"]
        self.notify("initialized", {})
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            await asyncio.wait_for(self._proc.wait(), 10)
        except (Exception, asyncio.TimeoutError):
            if self._proc.returncode is None:
                self._proc.kill()
                await self._proc.wait()
        self._reader.cancel()
        self.stderr = await self._stderr

    # -- sending -------------------------------------------------------------------------------

    def _write(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self._proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params) -> None:
        self._write({"method": method, "params": params})

    async def request(self, method: str, params, *, omit_params: bool = False) -> dict:
        """The server's answer: a dict with "result" or "error". Raises NoAnswer after the timeout."""
        msg_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        self._write({"id": msg_id, "method": method, **({} if omit_params else {"params": params})})
        try:
            return await asyncio.wait_for(future, self.timeout)
        except asyncio.TimeoutError:
            raise NoAnswer(f"no answer to {method} {json.dumps(params)[:300]} within {self.timeout} s") from None
        finally:
            self._waiting.pop(msg_id, None)

    def logged(self) -> list[str]:
        """What the server sent as window/logMessage and window/showMessage."""
        return [n["params"]["message"] for n in self.notifications
                if n.get("method") in ("window/logMessage", "window/showMessage")]

    # -- receiving -----------------------------------------------------------------------------

    async def _read(self) -> None:
        out = self._proc.stdout
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self._dispatch(json.loads(await out.readexactly(length)))

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:  # the server asks
            result = [{} for _ in message["params"]["items"]] if message["method"] == "workspace/configuration" else None
            self._write({"id": message["id"], "result": result})
        elif "method" in message:
            self.notifications.append(message)
        elif message.get("id") in self._waiting:
            future = self._waiting[message["id"]]
            if not future.done():
                future.set_result(message)
