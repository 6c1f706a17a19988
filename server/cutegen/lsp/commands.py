"""Server-side commands (ids distinct from the VS Code client's UI commands).

`check` is real; `test` and `profile` live in `verification`. The agent commands (diagnose, fix,
optimize, applyPatch) answer that the agent is not configured yet.
Every command replies with a plain dict: {"ok": bool, "message": str, ...}.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cutegen.lsp import verification
from cutegen.lsp.documents import path_of, uri_of
from cutegen.lsp.progress import Work
from cutegen.lsp.verification import reply, say
from cutegen.model import CheckResult

CHECK, TEST, PROFILE = "cutegen.server.check", "cutegen.server.test", "cutegen.server.profile"
AGENT = ("cutegen.server.diagnose", "cutegen.server.fix", "cutegen.server.optimize", "cutegen.server.applyPatch")


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

    server.command(TEST)(_file_command(TEST, verification.test))
    server.command(PROFILE)(_file_command(PROFILE, verification.profile))

    for command in AGENT:
        server.command(command)(_agent_command(command))


def _file_command(command: str, run):
    async def handler(ls, *args):
        uri = target(args)
        return await run(ls, uri) if uri else reply(False, f"{command} needs a file URI argument")
    return handler


def _agent_command(command: str):
    def handler(ls, *args):
        return say(ls, reply(False, "The CuTeGen agent is not configured yet: LLM diagnosis, fixes and "
                                     f"optimization ({command}) come in a later version."))
    return handler
