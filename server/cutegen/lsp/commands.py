"""Server-side commands (ids distinct from the VS Code client's UI commands).

`check` is real; `test` and `profile` live in `gpu_commands`, `profileLines` and `sanitize` in `profile_lens`,
`profileProgram` and `sanitizeProgram` (the user's own command) in `program`; the
agent commands (diagnose, fix, optimize, applyPatch, tune, restoreBest, generate) live in `agent`.
Every command replies with a plain dict: {"ok": bool, "message": str, ...}; fix/optimize/tune/restoreBest
add {"patch": {...}} when a verified patch is proposed, applyPatch answers {"applied": bool, "message": str}.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

from cutegen.lsp import gpu_commands, profile_lens, program
from cutegen.lsp.arguments import AgentArgs, FileArgs, LinesArgs, PatchArgs
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import path_of
from cutegen.lsp.progress import Work
from cutegen.lsp.gpu_commands import reply, say
from cutegen.model import CheckResult
from cutegen.toolchain import ToolchainError

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

CHECK, TEST, PROFILE = Command.CHECK.value, Command.TEST.value, Command.PROFILE.value
DIAGNOSE, FIX, OPTIMIZE, APPLY = Command.DIAGNOSE.value, Command.FIX.value, Command.OPTIMIZE.value, Command.APPLY_PATCH.value
TUNE, RESTORE, GENERATE = Command.TUNE.value, Command.RESTORE_BEST.value, Command.GENERATE.value
PROFILE_LINES, SANITIZE = Command.PROFILE_LINES.value, Command.SANITIZE.value


def summarize(result: CheckResult | None) -> dict:
    if result is None:
        return reply(False, "not checked (see the messages or the file's diagnostic)")
    errors = len(result.errors)
    warnings = sum(1 for d in result.diagnostics if d.severity.value == "warning")
    message = "ok" if result.ok else f"{errors} error(s)"
    return reply(result.ok, message, errors=errors, warnings=warnings, cached=result.cached,
                 seconds=round(result.seconds, 3), resources=[k.summary() for k in result.resources])


async def check(ls: CuteGenServer, uri: str) -> dict:
    path = path_of(uri)
    name = Path(path or uri).name
    if ls.open_document(uri) is None and not (path and path.is_file()):
        return reply(False, f"{name}: no such file")
    async with Work(ls, f"CuTeGen: checking {name}") as work:
        task = ls.checks.schedule(uri, record=True, on_stage=lambda stage: work.report(f"{stage}: {name}"))
        if task is None:
            return reply(False, f"{name} is not a .cu file")
        try:
            result = await task
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            why = "cancelled" if work.cancelled else "superseded by a newer check"
            return reply(False, f"check of {name} {why}", cancelled=True)
        work.end_message = summarize(result)["message"]
    ls.refresh_code_lens()
    return summarize(result)


def register(server: CuteGenServer) -> None:
    # Each handler gets its arguments decoded to the shape its annotation names (arguments.SHAPES; a wrong one
    # was answered InvalidParams before the handler ran). pygls reads a command handler's annotations when the
    # command runs (typing.get_type_hints), where CuteGenServer, imported for the type checker only, is not
    # defined: command handlers leave `ls` bare and pass it on to typed functions at once.
    @server.command(CHECK)
    async def check_command(ls, a: FileArgs):
        return await check(ls, a.uri)

    server.command(TEST)(_file_command(gpu_commands.test))
    server.command(PROFILE)(_file_command(gpu_commands.profile))
    server.command(SANITIZE)(_file_command(profile_lens.sanitize))
    server.command(Command.PROFILE_PROGRAM.value)(_file_command(program.profile_program))
    server.command(Command.SANITIZE_PROGRAM.value)(_file_command(program.sanitize_program))

    @server.command(PROFILE_LINES)
    async def profile_lines_command(ls, a: LinesArgs):
        return await profile_lens.profile_lines(ls, a.uri, show=bool(a.show))

    server.checks.listeners.append(server.agent.after_publish)  # background verified fixes

    server.command(DIAGNOSE)(_agent_command(lambda ls, a: ls.agent.diagnose(a.uri, a.diagnostic)))
    server.command(FIX)(_agent_command(lambda ls, a: ls.agent.fix(a.uri, a.version, a.diagnostic)))
    server.command(OPTIMIZE)(_agent_command(lambda ls, a: ls.agent.optimize(a.uri)))
    server.command(TUNE)(_agent_command(lambda ls, a: ls.agent.tune(a.uri)))
    server.command(RESTORE)(_agent_command(lambda ls, a: ls.agent.restore_best(a.uri)))
    server.command(GENERATE)(_agent_command(lambda ls, a: ls.agent.generate(a.uri)))

    @server.command(APPLY)
    async def apply_patch(ls, a: PatchArgs):
        answer = await ls.agent.apply(a.id, a.uri, a.version)
        return say(ls, {"ok": answer["applied"], **answer})


def _file_command(run: Callable[[CuteGenServer, str], Awaitable[dict]]):
    async def handler(ls, a: FileArgs):
        return await run(ls, a.uri)
    return handler


def _agent_command(run: Callable[[CuteGenServer, AgentArgs], Awaitable[dict]]):
    """Arguments: [{"uri", "version", "diagnostic"}] (the contract), or [uri, diagnostic data] (AgentArgs)."""
    async def handler(ls, a: AgentArgs):
        try:
            answer = await run(ls, a)
        except ToolchainError as e:
            answer = reply(False, str(e))
        return say(ls, {"ok": bool(answer.get("ok", "patch" in answer)), **answer})
    return handler
