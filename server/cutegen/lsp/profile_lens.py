"""The profile lens in the editor: the hottest lines marked at their end (`31 % · mio_throttle`), a hover on a hot
line (its stall reasons, what they mean, the knowledge base's advice, its SASS), a CodeLens naming the kernel's
hottest line, the "Profile Lines" command (a per-line profile, then the picture: profiler/lens_picture.py) and the
"Sanitize" command (compute-sanitizer's findings published as diagnostics at their lines).

Everything shown comes from the newest run record (profile or sanitize). A file whose text changed since the
record is never marked from it: the CodeLens says the profile is stale, the hints and hovers stay away, and the
sanitizer's diagnostics are withdrawn at the next check (and shown again from the record after a check of the
text it ran on).
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen import records
from cutegen.files import resolved
from cutegen.lsp import kernels
from cutegen.lsp.command_ids import Command
from cutegen.lsp.convert import to_lsp
from cutegen.lsp.documents import path_of, uri_of
from cutegen.lsp.gpu_commands import _unready, reply, say
from cutegen.lsp.progress import Work
from cutegen.model import Diagnostic
from cutegen.profiler.lines import digest
from cutegen.records import HotLine, LineProfile

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

HINTS = 5  # hot lines marked at their end
MIN_HINT_SHARE = 0.01  # a line under 1 % of the samples is not marked ("0 %" is noise); its hover still answers
SANITIZE_OWNER = "sanitize:"  # the Published owner of a file's sanitizer diagnostics


class Lens:
    """Which kernel's profile a header's hot lines belong to (a profile lists lines of the headers it ran)."""

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}  # file → the kernel whose profile holds its lines
        self._read: dict[str, tuple[float, LineProfile | None]] = {}  # record path → (mtime, its lines)

    def profile_for(self, ls: CuteGenServer, path: Path) -> LineProfile | None:
        """The file's own profile, else the kernel's whose profile ran its lines, else the workspace's newest
        profile of the user's own program (Profile Program, `cutegen profile --lines -- CMD`)."""
        for kernel in dict.fromkeys([str(path), self.owner.get(str(path), str(path))]):
            lines = self._lines(records.latest_path(ls.session.state_dir(Path(kernel)), kernel, "profile"))
            if lines is not None and any(h.file == str(path) for h in lines.lines):
                return lines
        state = ls.session.state_dir(path)
        lines = self._lines(records.latest_path(state, state.program_record, "profile"))
        return lines if lines is not None and any(h.file == str(path) for h in lines.lines) else None

    def _lines(self, record_path: Path) -> LineProfile | None:
        """A record's lines, read again only when the record changed (hints are asked for on every scroll)."""
        try:
            mtime = record_path.stat().st_mtime
        except OSError:
            return None
        cached = self._read.get(str(record_path))
        if cached is None or cached[0] != mtime:
            record = records.read(record_path)
            cached = self._read[str(record_path)] = (mtime, record.lines if record is not None else None)
        return cached[1]

    def learn(self, kernel: str, profile: LineProfile | None) -> None:
        for h in profile.lines if profile else []:
            self.owner.setdefault(h.file, kernel)


def _text(ls: CuteGenServer, uri: str, path: Path) -> str | None:
    doc = ls.open_document(uri)
    if doc is not None:
        return doc.source
    try:
        return path.read_text(errors="surrogateescape")
    except OSError:
        return None


def fresh_profile(ls: CuteGenServer, uri: str, text: str | None = None) -> tuple[LineProfile | None, bool]:
    """(the line profile that covers this file, whether it is stale against the file's current text)."""
    path = path_of(uri)
    if path is None:
        return None, False
    profile = ls.lens.profile_for(ls, path)
    if profile is None:
        return None, False
    text = text if text is not None else _text(ls, uri, path)
    return profile, text is None or profile.stale(str(path), text)


# -- inlay hints, hover, CodeLens ---------------------------------------------------------------------


def inlay_hints(ls: CuteGenServer, uri: str, text: str, first: int = 0,
                last: int | None = None) -> list[types.InlayHint]:
    profile, stale = fresh_profile(ls, uri, text)
    if profile is None or stale:
        return []
    lines = text.splitlines()
    out = []
    for h in profile.hottest(HINTS, str(path_of(uri))):
        n = h.line - 1
        if h.share < MIN_HINT_SHARE:
            continue
        if 0 <= n < len(lines) and first <= n <= (last if last is not None else n):
            out.append(types.InlayHint(position=types.Position(line=n, character=len(lines[n])), label=h.label(),
                                       padding_left=True, tooltip=_tooltip(h)))
    return out


def _tooltip(h: HotLine) -> str:
    return "CuTeGen profile: " + ", ".join(f"{r} {c / max(h.samples, 1) * 100:.0f} %" for r, c in h.top_stalls(3))


def hover_markdown(ls: CuteGenServer, uri: str, line: int, text: str) -> str | None:
    """The hover of a hot line (0-based `line`), or None when the line is not hot or the profile is stale."""
    profile, stale = fresh_profile(ls, uri, text)
    if profile is None or stale:
        return None
    path = str(path_of(uri))
    hot = next((h for h in profile.lines if h.file == path and h.line == line + 1), None)
    return line_markdown(hot, profile) if hot is not None and hot.samples else None


def line_markdown(h: HotLine, profile: LineProfile) -> str:
    parts = [f"**CuTeGen profile · line {h.line}: {h.share * 100:.1f} % of the samples** "
             f"({h.samples:,} of {profile.total_samples:,})"]
    rows = ["| stall | share | what it means | what to do |", "|---|---|---|---|"]
    for reason, count in h.top_stalls(4):
        signal, advice = _advice(reason)
        rows.append(f"| `{reason}` | {count / h.samples * 100:.0f} % | {_cell(_meaning(reason))} | {_cell(advice)}"
                    + (f" (signal `{signal}`)" if signal else "") + " |")
    parts.append("\n".join(rows))
    figures = [f"{h.executed:,} warp instructions executed"]
    if h.excess_sectors:
        figures.append(f"{h.excess_sectors:,} excess L2 sectors (uncoalesced)")
    if h.excess_wavefronts:
        figures.append(f"{h.excess_wavefronts:,} excess shared wavefronts (bank conflicts)")
    parts.append(" · ".join(figures))
    if h.markers:
        parts.append("Nsight Compute: " + " ".join(h.markers[:2]))
    if h.sass:
        parts.append("SASS (hottest instructions of this line):\n```\n" + "\n".join(h.sass) + "\n```")
    return "\n\n".join(parts)


def _cell(text: str) -> str:
    """Text in a Markdown table cell: `<uint128_t>` would be taken for HTML and vanish, `|` would end the cell."""
    return html.escape(text, quote=False).replace("|", "\\|")


def _meaning(reason: str) -> str:
    from cutegen.profiler.stalls import meaning

    return meaning(reason)


def _advice(reason: str) -> tuple[str, str]:
    try:
        from cutegen.knowledge import KnowledgeBase

        found = KnowledgeBase.load().advice_for_stall(reason)
    except Exception:  # a broken knowledge base costs the advice, never the hover
        found = None
    return found if found else ("", "")


def code_lenses(ls: CuteGenServer, anchor: kernels.Anchor, uri: str, path: Path) -> list[types.CodeLens]:
    """On the entry kernel: its hottest line (or that the profile is stale), and Sanitize when a test's verdict
    or an earlier sanitizer run calls for it."""
    out = []
    profile, stale = fresh_profile(ls, uri)
    at = types.Range(start=types.Position(line=anchor.line, character=anchor.start),
                     end=types.Position(line=anchor.line, character=anchor.end))
    if profile is not None:
        if stale:
            out.append(_lens(at, "line profile is stale (the file changed): Profile Lines", Command.PROFILE_LINES, [uri]))
        elif (top := profile.hottest(1)):
            h = top[0]
            where = f"line {h.line}" if h.file == str(path) else f"{Path(h.file).name}:{h.line}"
            out.append(_lens(at, f"hottest: {where} ({h.label()}) · {profile.user_share * 100:.0f} % on user lines",
                             Command.PROFILE_LINES, [{"uri": uri, "show": True}]))
    sanitized = records.latest(ls.session.state_dir(path), str(path), "sanitize")
    tested = records.latest(ls.session.state_dir(path), str(path), "test")
    from cutegen.profiler.sanitizer import suggestion

    if sanitized is not None:
        out.append(_lens(at, f"sanitize: {sanitized.summary()}", Command.SANITIZE, [uri]))
    elif tested is not None and suggestion(tested.verdict, tested.message):
        out.append(_lens(at, f"Sanitize (test: {tested.verdict})", Command.SANITIZE, [uri]))
    return out


def _lens(at: types.Range, title: str, command: Command, arguments: list) -> types.CodeLens:
    return types.CodeLens(range=at, command=types.Command(title=title, command=command.value, arguments=arguments))


# -- commands -------------------------------------------------------------------------------------------


def _dirty(ls: CuteGenServer, uri: str, path: Path) -> bool:
    doc = ls.open_document(uri)
    try:
        return doc is not None and doc.source != path.read_text(errors="surrogateescape")
    except OSError:
        return True


async def profile_lines(ls: CuteGenServer, uri: str, *, show: bool = False) -> dict:
    """Profile the file's lines (ncu), or with `show` answer with its latest line profile without a run."""
    path = path_of(uri)
    if path is None or not path.is_file():
        return reply(False, f"{Path(uri).name}: no such file")
    if show:
        return picture_reply(ls, uri, path)
    if _dirty(ls, uri, path):
        return say(ls, reply(False, f"save {path.name} first: the profile runs the file as it is on disk"))
    if (answer := await _unready(ls, path, "profile", "Profiling")) is not None:
        return answer
    async with Work(ls, f"CuTeGen: profiling the lines of {path.name}") as work:
        try:
            record = await asyncio.to_thread(ls.session.profile, path, lines=True, on_stage=work.report)
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            return reply(False, f"profile of {path.name} cancelled", cancelled=True)
        work.end_message = record.summary() or record.verdict
    ls.lens.learn(str(path), record.lines)
    _refresh(ls)
    if record.lines is None:
        why = record.details.get("lines_problem") or record.message
        return say(ls, reply(False, f"{path.name}: {record.summary()}: no line profile ({why})",
                             verdict=record.verdict, record=record.path))
    answer = picture_reply(ls, uri, path)
    answer["message"] = f"{path.name}: {record.summary()}"
    return say(ls, answer)


def picture_reply(ls: CuteGenServer, uri: str, path: Path) -> dict:
    """{ok, title, svg, stale, lines} for the newest line profile covering `path`."""
    from dataclasses import asdict

    from cutegen.profiler.lens_picture import draw

    profile, stale = fresh_profile(ls, uri)
    if profile is None:
        return reply(False, f"{path.name} has no line profile yet: run CuTeGen: Profile Lines")
    text = _text(ls, uri, path) or ""
    title = f"{path.name}: " + ("stale line profile" if stale else profile.summary())
    return reply(True, title, title=title, stale=stale, svg=draw(profile, str(path), text, stale=stale),
                 lines=[asdict(h) for h in profile.hottest(10)])


async def sanitize(ls: CuteGenServer, uri: str) -> dict:
    path = path_of(uri)
    if path is None or not path.is_file():
        return reply(False, f"{Path(uri).name}: no such file")
    if _dirty(ls, uri, path):
        return say(ls, reply(False, f"save {path.name} first: the sanitizer runs the file as it is on disk"))
    if (answer := await _unready(ls, path, "sanitize", "The sanitizer")) is not None:
        return answer
    async with Work(ls, f"CuTeGen: sanitizing {path.name}") as work:
        try:
            record = await asyncio.to_thread(ls.session.sanitize, path, on_stage=work.report)
        except asyncio.CancelledError:
            work.end_message = "cancelled"
            return reply(False, f"sanitizer run of {path.name} cancelled", cancelled=True)
        work.end_message = record.summary() or record.verdict
    publish_findings(ls, uri, record.diagnostics)
    ls.refresh_code_lens()
    return say(ls, reply(record.level == "ok", f"{path.name}: {record.summary()}: {record.message}",
                         verdict=record.verdict, summary=record.summary(), record=record.path,
                         findings=len(record.diagnostics)))


def publish_findings(ls: CuteGenServer, uri: str, diagnostics: list[Diagnostic]) -> None:
    """The sanitizer's diagnostics, under their own owner: a check of the file leaves them, a change withdraws them."""
    groups: dict[str, list] = {uri: []}
    main = path_of(uri)
    for d in diagnostics:
        target = uri if main is not None and Path(d.file) == main else uri_of(resolved(d.file))
        groups.setdefault(target, []).append((to_lsp(d), d))
    doc = ls.open_document(uri)
    for affected in ls.published.replace(SANITIZE_OWNER + uri, groups):
        ls.checks.send(affected, doc.version if doc is not None and affected == uri else None)


def _sync_findings(ls: CuteGenServer, job, result) -> None:
    """After a check: the newest sanitizer run's findings are shown while the file's text is the one it ran on
    (also after a restart: the record is what the editor shows), and withdrawn once it is not."""
    record = records.latest(ls.session.state_dir(job.path), str(job.path), "sanitize")
    if record is None:
        return
    text = _text(ls, job.uri, job.path)
    fresh = record.sanitizer is not None and text is not None and \
        record.sanitizer.digests.get(str(job.path)) == digest(text)
    if fresh:
        publish_findings(ls, job.uri, record.diagnostics)
    else:
        for affected in ls.published.drop(SANITIZE_OWNER + job.uri):  # nothing when none was published
            ls.checks.send(affected, None)


def _hints_after_check(ls: CuteGenServer, job) -> None:
    """A checked file with a line profile gets its marks asked for again (a profile made elsewhere, the CLI's,
    shows without reopening the file; a stale one loses them)."""
    if ls.lens.profile_for(ls, job.path) is not None and ls.supports("workspace.inlay_hint.refresh_support"):
        ls.workspace_inlay_hint_refresh(None)


def _refresh(ls: CuteGenServer) -> None:
    ls.refresh_code_lens()
    if ls.supports("workspace.inlay_hint.refresh_support"):
        ls.workspace_inlay_hint_refresh(None)


def register(server: CuteGenServer) -> None:
    server.checks.listeners.append(lambda job, result: _sync_findings(server, job, result))
    server.checks.listeners.append(lambda job, result: _hints_after_check(server, job))
