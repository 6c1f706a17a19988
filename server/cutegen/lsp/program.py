"""Profile Program and Sanitize Program: the user's own command (`cutegen.programCommand`, with its kernel filter,
launch count and binary) under Nsight Compute or compute-sanitizer, from the palette. The engine runs it
(Session.profile_program) and files the line profile where the profile lens reads it, so the hot lines land in the
program's sources as an ABI kernel's do (profile_lens.py: marks, hovers, the picture); the sanitizer's findings
are published at their lines.

The command is a user setting (workspace_trust.py): a cloned repository cannot choose what runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from cutegen.files import resolved
from cutegen.lsp.convert import to_lsp
from cutegen.lsp.documents import path_of, uri_of
from cutegen.lsp.gpu_commands import _unready, reply, say
from cutegen.lsp.profile_lens import SANITIZE_OWNER, _refresh
from cutegen.lsp.progress import Work
from cutegen.model import Diagnostic, Severity
from cutegen.records import LineProfile
from cutegen.settings import editor_key

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

NO_COMMAND = (f"set {editor_key('program_command')} in your user settings to the program to run, as a list "
              '(e.g. ["./bench", "--size", "4096"] or ["python", "train.py"]); it runs in the workspace folder')
PROGRAM_OWNER = SANITIZE_OWNER + "program:"  # the published owner of a program's sanitizer findings


def folder_of(ls: CuteGenServer, uri: str) -> Path | None:
    """Where the program runs: the workspace folder holding `uri` (a file or a folder), else `uri`'s own folder."""
    path = path_of(uri)
    if path is None:
        return None
    for root in sorted(ls.session.roots, key=lambda r: len(str(r)), reverse=True):
        if path == root or root in path.parents:
            return root
    return path if path.is_dir() else path.parent


async def profile_program(ls: CuteGenServer, uri: str) -> dict:
    return await _run(ls, uri, sanitize=None)


async def sanitize_program(ls: CuteGenServer, uri: str) -> dict:
    return await _run(ls, uri, sanitize="memcheck")


async def _run(ls: CuteGenServer, uri: str, sanitize: str | None) -> dict:
    await ls.settings_loaded()  # a command sent at once after start-up: the user's command is in the settings
    settings = ls.session.settings
    argv = list(settings.program_command)
    if not argv:
        return say(ls, reply(False, f"CuTeGen: no program to {'sanitize' if sanitize else 'profile'}: {NO_COMMAND}"))
    cwd = folder_of(ls, uri)
    if cwd is None or not cwd.is_dir():
        return say(ls, reply(False, f"{uri}: no such folder to run the program in"))
    shown = " ".join(argv)
    doing = "The sanitizer" if sanitize else "Profiling"
    if (answer := await _unready(ls, cwd / "program", "sanitize" if sanitize else "profile", doing)) is not None:
        return answer
    async with Work(ls, f"CuTeGen: {'sanitizing' if sanitize else 'profiling'} {shown}") as work:
        try:
            run = await asyncio.to_thread(ls.session.profile_program, argv, cwd, kernel=settings.program_kernel,
                                          launches=settings.program_launches, binary=settings.program_binary,
                                          sanitize=sanitize)
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            return reply(False, f"{shown}: cancelled", cancelled=True)
        work.end_message = run.problem or "done"
    if run.problem:
        return say(ls, reply(False, f"{shown}: {run.problem}", output=run.output))
    if sanitize:
        return say(ls, _published(ls, uri, shown, sanitize, run.findings))
    return say(ls, lines_reply(ls, shown, LineProfile.from_json(run.lines), record=run.record, report=run.report))


def lines_reply(ls: CuteGenServer, shown: str, profile: LineProfile, **extra) -> dict:
    """The reply of a program profile: where its hottest user line is; the marks are asked for again."""
    _refresh(ls)
    top = profile.hottest(1)
    if not top:
        return reply(True, f"{shown}: no samples on user lines ({profile.total_samples:,} samples in all)", **extra)
    h = top[0]
    message = (f"{shown}: hottest {Path(h.file).name}:{h.line} ({h.label()}) · "
               f"{profile.user_share * 100:.0f} % on user lines")
    return reply(True, message, lines=[asdict(x) for x in profile.hottest(10)], **extra)


def _published(ls: CuteGenServer, uri: str, shown: str, tool: str, findings: list[dict]) -> dict:
    """The findings as error diagnostics at their lines, replacing the program's previous ones."""
    groups: dict[str, list] = {}
    for f in findings:
        d = Diagnostic(file=f["file"], line=int(f["line"]), col=1, end_col=1, severity=Severity.ERROR,
                       message=f"{tool}: {f['message']}", code=f"sanitizer-{tool}", source="compute-sanitizer")
        groups.setdefault(uri_of(resolved(d.file)), []).append((to_lsp(d), d))
    for affected in ls.published.replace(PROGRAM_OWNER + uri, groups):
        ls.checks.send(affected, None)
    count = len(findings)
    return reply(count == 0, f"{shown}: {count} {tool} finding{'s' if count != 1 else ''} at user lines"
                             if count else f"{shown}: {tool} found nothing", findings=count)
