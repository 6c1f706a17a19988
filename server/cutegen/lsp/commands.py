"""Server-side commands (ids distinct from the VS Code client's UI commands).

`check` is real; `test` and `profile` live in `gpu_commands`; the agent commands (diagnose, fix,
optimize, applyPatch, tune, restoreBest) live in `agent`.
Every command replies with a plain dict: {"ok": bool, "message": str, ...}; fix/optimize/tune/restoreBest
add {"patch": {...}} when a verified patch is proposed, applyPatch answers {"applied": bool, "message": str}.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cutegen.lsp import gpu_commands
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import path_of, uri_of
from cutegen.lsp.progress import Work
from cutegen.lsp.gpu_commands import reply, say
from cutegen.model import CheckResult
from cutegen.toolchain import ToolchainError

CHECK, TEST, PROFILE = Command.CHECK.value, Command.TEST.value, Command.PROFILE.value
DIAGNOSE, FIX, OPTIMIZE, APPLY = Command.DIAGNOSE.value, Command.FIX.value, Command.OPTIMIZE.value, Command.APPLY_PATCH.value
TUNE, RESTORE, GENERATE = Command.TUNE.value, Command.RESTORE_BEST.value, Command.GENERATE.value


def target(args: tuple) -> str | None:
    """The file a command is about: a URI or path, or {"uri": ...} / {"textDocument": {"uri": ...}}."""
    first = args[0] if args else None
    if isinstance(first, dict):
        first = first.get("uri") or (first.get("textDocument") or {}).get("uri")
    if not isinstance(first, str) or not first:
        return None
    return first if ":" in first.split("/", 1)[0] else uri_of(Path(first).resolve())


def summarize(result: CheckResult | None) -> dict:
    if result is None:
        return reply(False, "not checked (see the messages or the file's diagnostic)")
    errors = len(result.errors)
    warnings = sum(1 for d in result.diagnostics if d.severity.value == "warning")
    message = "ok" if result.ok else f"{errors} error(s)"
    return reply(result.ok, message, errors=errors, warnings=warnings, cached=result.cached,
                 seconds=round(result.seconds, 3), resources=[k.summary() for k in result.resources])


async def check(ls, uri: str) -> dict:
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


def register(server) -> None:
    @server.command(CHECK)
    async def check_command(ls, *args):
        uri = target(args)
        return await check(ls, uri) if uri else reply(False, f"{CHECK} needs a file URI argument")

    server.command(TEST)(_file_command(TEST, gpu_commands.test))
    server.command(PROFILE)(_file_command(PROFILE, gpu_commands.profile))

    server.checks.listeners.append(server.agent.after_publish)  # background verified fixes

    server.command(DIAGNOSE)(_agent_command(DIAGNOSE, lambda ls, uri, a: ls.agent.diagnose(uri, a.get("diagnostic"))))
    server.command(FIX)(_agent_command(FIX, lambda ls, uri, a: ls.agent.fix(uri, a.get("version"), a.get("diagnostic"))))
    server.command(OPTIMIZE)(_agent_command(OPTIMIZE, lambda ls, uri, a: ls.agent.optimize(uri)))
    server.command(TUNE)(_agent_command(TUNE, lambda ls, uri, a: ls.agent.tune(uri)))
    server.command(RESTORE)(_agent_command(RESTORE, lambda ls, uri, a: ls.agent.restore_best(uri)))
    server.command(GENERATE)(_agent_command(GENERATE, lambda ls, uri, a: ls.agent.generate(uri)))

    @server.command(APPLY)
    async def apply_patch(ls, *args):
        a = args[0] if args and isinstance(args[0], dict) else {}
        if not a.get("id"):
            return {"applied": False, "ok": False, "message": f"{APPLY} needs [{{id, uri, version}}]"}
        answer = await ls.agent.apply(a["id"], target(args) or "", a.get("version"))
        return say(ls, {"ok": answer["applied"], **answer})


def _file_command(command: str, run):
    async def handler(ls, *args):
        uri = target(args)
        return await run(ls, uri) if uri else reply(False, f"{command} needs a file URI argument")
    return handler


def _agent_command(command: str, run):
    """Arguments: [{"uri", "version", "diagnostic"}] (the contract), or [uri, diagnostic data]."""
    async def handler(ls, *args):
        uri = target(args)
        if not uri:
            return reply(False, f"{command} needs a file URI argument")
        a = dict(args[0]) if isinstance(args[0], dict) else {}
        if len(args) > 1 and isinstance(args[1], dict) and "diagnostic" not in a:
            a["diagnostic"] = args[1]
        try:
            answer = await run(ls, uri, a)
        except ToolchainError as e:
            answer = reply(False, str(e))
        return say(ls, {"ok": bool(answer.get("ok", "patch" in answer)), **answer})
    return handler
