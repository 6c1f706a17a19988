"""The test and profile commands: the engine session's harness run (build → GPU worker → verdict → run
record) and its profiler.

Both are optional parts of a build; without them the command says so plainly. They block, so they
run in a worker thread; cancelling kills the build's nvcc and the GPU worker process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.lsp.documents import path_of
from cutegen.lsp.progress import Work
from cutegen.records import RunRecord
from cutegen.toolchain import ToolchainError

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer


def reply(ok: bool, message: str, **extra) -> dict:
    return {"ok": ok, "message": message, **extra}


def say(ls: CuteGenServer, answer: dict) -> dict:
    """Commands started from a CodeLens have no visible reply: show the message too."""
    ls.show(answer["message"], types.MessageType.Info if answer["ok"] else types.MessageType.Warning)
    return answer


def _finished(ls: CuteGenServer, path: Path, record: RunRecord) -> dict:
    """The reply of a finished test or profile: the record's one-line summary (what CodeLens, hover and the CLI
    show) and its level, so the extension needs no verdict list of its own."""
    ls.refresh_code_lens()
    summary = record.summary() or record.verdict
    return say(ls, reply(record.level == "ok", f"{path.name}: {summary}: {record.message}",
                         verdict=record.verdict, summary=summary, level=record.level, record=record.path))


async def _unready(ls: CuteGenServer, path: Path, action: str, doing: str) -> dict | None:
    """Why `action` ("test", "profile", "sanitize") cannot run here (an optional part of the build is missing, or
    no toolchain), as the reply, `doing` naming it ("Testing"); else None."""
    missing = ls.session.missing_part(action)
    if missing is not None:
        return say(ls, reply(False, f"{doing} is not available in this build ({missing} is missing)."))
    try:
        await asyncio.to_thread(ls.session.builder, path)
    except ToolchainError as e:
        return say(ls, reply(False, str(e)))
    return None


async def test(ls: CuteGenServer, uri: str) -> dict:
    path = path_of(uri)
    if path is None:  # the arguments' check lets only file: URIs through, and one may still name no path
        return say(ls, reply(False, f"Testing needs a file on disk, not {uri}."))
    if (answer := await _unready(ls, path, "test", "Testing")) is not None:
        return answer
    async with Work(ls, f"CuTeGen: testing {path.name}") as work:
        try:
            record = await asyncio.to_thread(ls.session.test, path, on_stage=work.report)
        except asyncio.CancelledError:
            ls.session.cancel_build(path)
            ls.session.stop_worker()
            work.end_message = "cancelled"
            return reply(False, f"test of {path.name} cancelled", cancelled=True)
        work.end_message = record.summary() or record.verdict
    return _finished(ls, path, record)


async def profile(ls: CuteGenServer, uri: str) -> dict:
    path = path_of(uri)
    if path is None:  # the arguments' check lets only file: URIs through, and one may still name no path
        return say(ls, reply(False, f"Profiling needs a file on disk, not {uri}."))
    if (answer := await _unready(ls, path, "profile", "Profiling")) is not None:
        return answer
    async with Work(ls, f"CuTeGen: profiling {path.name}") as work:
        try:
            record = await asyncio.to_thread(ls.session.profile, path, on_stage=work.report)
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            return reply(False, f"profile of {path.name} cancelled", cancelled=True)
    return _finished(ls, path, record)
