"""Work-done progress for a long command, and its cancellation from either side of the wire.

The client can stop a command two ways: `$/cancelRequest` for the executeCommand request, or
`window/workDoneProgress/cancel` for its progress token. Both cancel the command's task; awaits
inside it (a check job, a worker thread) are cancelled with it, and they stop their processes.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Callable

from lsprotocol import types

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

CREATE_TIMEOUT_S = 5.0  # a client that never answers window/workDoneProgress/create gets no progress bar


class Work:
    """`on_cancel`: background work that no request waits for (the save-time loop) is stopped by it, not by
    cancelling the current task, and no request's $/cancelRequest reaches it."""

    def __init__(self, ls: CuteGenServer, title: str, on_cancel: Callable[[], None] | None = None) -> None:
        self.ls = ls
        self.title = title
        self._on_cancel = on_cancel
        self.token: str | None = None
        self.cancelled = False
        self.end_message = "done"
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._msg_id: str | int | None = None

    async def __aenter__(self) -> "Work":
        loop = asyncio.get_running_loop()
        self._task, self._loop = asyncio.current_task(), loop
        self._msg_id = self.ls.protocol.msg_id if self._on_cancel is None else None
        if self._msg_id is not None:
            self.ls.protocol.cancel_hooks[self._msg_id] = self.cancel
        if self.ls.supports("window.work_done_progress"):
            await self._begin(loop)
        return self

    async def _begin(self, loop: asyncio.AbstractEventLoop) -> None:
        token, progress = f"cutegen-{uuid.uuid4()}", self.ls.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), CREATE_TIMEOUT_S)
        except Exception as e:  # the client refused: run without a progress bar
            self.ls.log(f"no progress for {self.title!r}: {e!r}")
            return
        self.token = token
        progress.begin(token, types.WorkDoneProgressBegin(title=self.title, cancellable=True))
        progress.tokens[token].add_done_callback(
            lambda f: f.cancelled() and loop.call_soon_threadsafe(self.cancel))

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        if self._on_cancel is not None:
            self._on_cancel()
        elif self._task is not None:  # always, once entered: only __aenter__ hands out ways to call this
            self._task.cancel()

    def report(self, message: str) -> None:
        """Safe to call from worker threads."""
        if self.token is not None and self._loop is not None:  # the token is only set once __aenter__ has the loop
            self._loop.call_soon_threadsafe(self._report, self.token, message)

    def _report(self, token: str, message: str) -> None:
        if token == self.token:  # a report queued by a thread must not follow the end
            self.ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))

    async def __aexit__(self, *exc) -> bool:
        self.ls.protocol.cancel_hooks.pop(self._msg_id, None)
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=self.end_message))
            self.ls.work_done_progress.tokens.pop(self.token, None)
            self.token = None
        return False
