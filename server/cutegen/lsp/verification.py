"""Test and profile commands: the harness (build → GPU worker → verdict → run record) and the profiler.

Both are optional parts of a build; without them the command says so plainly. They block, so they
run in a worker thread; cancelling kills the build's nvcc and the GPU worker process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from cutegen.lsp.documents import path_of
from cutegen.lsp.progress import Work
from cutegen.toolchain import ToolchainError


def reply(ok: bool, message: str, **extra) -> dict:
    return {"ok": ok, "message": message, **extra}


def say(ls, answer: dict) -> dict:
    """Commands started from a CodeLens have no visible reply: show the message too."""
    ls.show(answer["message"], types.MessageType.Info if answer["ok"] else types.MessageType.Warning)
    return answer


async def test(ls, uri: str) -> dict:
    try:
        from cutegen.harness.verify import verify_kernel
        from cutegen.harness.worker import Worker
    except ImportError as e:
        return say(ls, reply(False, f"Testing is not available in this build ({e.name} is missing)."))
    path = path_of(uri)
    try:
        builder = await asyncio.to_thread(ls.session.builder, path)
    except ToolchainError as e:
        return say(ls, reply(False, str(e)))
    worker = ls.session.worker(Worker)
    async with Work(ls, f"CuTeGen: testing {path.name}") as work:
        try:
            record = await asyncio.to_thread(
                verify_kernel, path, builder, worker, problem=ls.session.settings.problem,
                state_dir=ls.session.state_dir(path), on_stage=work.report)
        except asyncio.CancelledError:
            builder.cancel(f"build:{path}")  # the harness builds under the Builder's default job key
            worker.stop()
            work.end_message = "cancelled"
            return reply(False, f"test of {path.name} cancelled", cancelled=True)
        work.end_message = str(record.get("verdict"))
    ls.refresh_code_lens()
    verdict = record.get("verdict")
    return say(ls, reply(verdict == "pass", f"{path.name}: {verdict}: {record.get('message', '')}",
                         verdict=verdict, record=record.get("record")))


async def profile(ls, uri: str) -> dict:
    try:
        from cutegen.harness.worker import Worker
        from cutegen.profiler import profile_kernel
    except ImportError as e:
        return say(ls, reply(False, f"Profiling is not available in this build ({e.name} is missing)."))
    path: Path = path_of(uri)
    try:
        builder = await asyncio.to_thread(ls.session.builder, path)
    except ToolchainError as e:
        return say(ls, reply(False, str(e)))
    async with Work(ls, f"CuTeGen: profiling {path.name}") as work:
        try:
            record = await asyncio.to_thread(
                profile_kernel, path, builder, ls.session.worker(Worker),
                problem=ls.session.settings.problem, state_dir=ls.session.state_dir(path), on_stage=work.report)
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            return reply(False, f"profile of {path.name} cancelled", cancelled=True)
    ls.refresh_code_lens()
    verdict = record.get("verdict")
    return say(ls, reply(verdict == "profiled", f"{path.name}: {verdict}: {record.get('message', '')}",
                         verdict=verdict, record=record.get("record")))
