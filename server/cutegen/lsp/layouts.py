"""Concrete CuTe layouts in the editor: inlay hints after declarations and a hover contribution.

After a clean check of a saved version, the layout service runs a probe build in the background; hints and
hovers answer from its results (never compiling), say "layouts are being computed" meanwhile, and the
client is asked to refresh its inlay hints when a probe ends. A failed probe is logged, never published as
a diagnostic.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from lsprotocol import types

from cutegen.layouts.pictures import NotDrawable, picture
from cutegen.layouts.scan import find_declarations
from cutegen.layouts.service import COMPUTING, READY, LayoutService
from cutegen.lsp import kernels
from cutegen.lsp.arguments import PlaceArgs
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import is_checked, path_of, word_at
from cutegen.session import LayoutFact, ProbeResult, nothing_at

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

SHOW_COMMAND = "cutegen.showLayout"  # the extension's webview (vscode-client/src/layoutView.ts): [{uri, line, character}]
DRAWABLE = {"Layout", "ComposedLayout", "Tensor", "TiledCopy", "ThrCopy", "TiledMMA", "ThrMMA"}
# {uri, line, character[, instantiation]} → {title, kind, svg, instantiations} | {error}; belongs in command_ids.Command
PICTURE_COMMAND = Command.LAYOUT_PICTURE.value
HINT_MAX = 60  # "short" hints: longer ones (TiledCopy, TiledMMA, deep partitions) only on hover
COMPUTING_TEXT = "*CuTe layouts are being computed (probe build of this version)…*"


def _service(ls: CuteGenServer) -> LayoutService:
    return ls.layout_service


def facts_for_text(ls: CuteGenServer, path: Path, text: str) -> tuple[str, list[LayoutFact]]:
    """(state, facts still valid for `text`): the exact version's facts, else the newest probed version's
    facts whose declarations still stand where they were (an edited, unsaved buffer keeps its hints)."""
    look = _service(ls).lookup(path, text)
    if look.state == READY and look.result is not None:  # READY always comes with its result
        return READY, look.result.facts
    older = _service(ls).latest(path)
    lines = text.splitlines()
    still = [f for f in (older.facts if older else []) if f.line <= len(lines)
             and lines[f.line - 1][f.col - 1:].startswith(f.name)]
    return look.state, still


def hint_label(facts: list[LayoutFact]) -> str:
    if len(facts) == 1:
        return facts[0].layout
    return " | ".join(f"{f.instantiation}: {f.layout}" if f.instantiation else f.layout for f in facts)


def inlay_hints(ls: CuteGenServer, uri: str, text: str, mode: str, first: int = 0,
                last: int | None = None) -> list[types.InlayHint]:
    if mode == "off":
        return []
    path = path_of(uri)
    if path is None:
        return []
    _, facts = facts_for_text(ls, path, text)
    lines = text.splitlines()
    by_place: dict[tuple[int, int], list[LayoutFact]] = defaultdict(list)
    for f in facts:
        by_place[(f.line, f.col)].append(f)
    hints = []
    for (line, _), group in sorted(by_place.items()):
        if line - 1 < first or (last is not None and line - 1 > last):
            continue
        label = hint_label(group)
        if mode != "all" and len(label) > HINT_MAX:
            continue
        hints.append(types.InlayHint(position=types.Position(line=line - 1, character=len(lines[line - 1])),
                                     label=f"{group[0].name}: {label}", kind=types.InlayHintKind.Type,
                                     padding_left=True, tooltip=f"{group[0].kind} (from a probe build)"))
    return hints


def facts_at(ls: CuteGenServer, uri: str, position: types.Position, text: str) -> list[LayoutFact]:
    """The facts of the object named under `position` (its nearest declaration above), else of those declared
    on that line."""
    path = path_of(uri)
    if path is None:
        return []
    _, facts = facts_for_text(ls, path, text)
    word = word_at(text.splitlines(), position.line, position.character)
    named = [f for f in facts if f.name == word]
    if not named:
        return [f for f in facts if f.line == position.line + 1]
    above = [f for f in named if f.line <= position.line + 1]
    line = max(f.line for f in above) if above else min(f.line for f in named)
    return [f for f in named if f.line == line]


def layout_hover(ls: CuteGenServer, uri: str, position: types.Position, text: str | None = None) -> str | None:
    """Markdown for the CuTe object under `position` (its layout per instantiation), a note while the
    layouts are being computed, or None. Answers from memory."""
    path = path_of(uri)
    if path is None or not is_checked(path):
        return None
    if text is None:
        doc = ls.open_document(uri)
        if doc is None:
            return None
        text = doc.source
    word = word_at(text.splitlines(), position.line, position.character)
    if not word:
        return None
    state = _service(ls).lookup(path, text).state
    chosen = [f for f in facts_at(ls, uri, position, text) if f.name == word]  # nearest declaration above
    if not chosen:
        if state == COMPUTING and any(d.name == word for d in find_declarations(text)):
            return COMPUTING_TEXT
        return None
    shown, others = chosen[0], chosen[1:]
    where = shown.shown_as(chosen)
    head = f"**`{word}`** — CuTe {shown.kind} (line {shown.line})" + (f", {_code(where)}" if where else "")
    parts = [head, f"```\n{_labelled(shown, several=bool(others))}\n```"]
    if others:
        rest = "\n".join(_labelled(f, several=True) for f in others)
        parts.append(f"The other instantiations (*CuTeGen: show layout of {word} in …* draws each):\n```\n{rest}\n```")
    if state != READY:
        parts.append("*from the last probed version; the current one is not probed yet*")
    return "\n\n".join(parts)


def _labelled(f: LayoutFact, several: bool) -> str:
    return f"[{f.instantiation}] {f.layout}" if f.instantiation and several else f.layout


def _code(where: str) -> str:
    """'in gemm_tn<half_t, half_t> (1 of 2)' with the instantiation as code ('the same in all 2 ...' as it is)."""
    if not where.startswith("in "):
        return where
    name, _, count = where.removeprefix("in ").rpartition(" (")
    return f"in `{name}` ({count}"


def layout_code_actions(ls: CuteGenServer, uri: str, at: types.Range) -> list[types.CodeAction]:
    """"Show layout of NAME" for the CuTe object under the cursor (for code_actions.py to append)."""
    doc = ls.open_document(uri)
    if doc is None:
        return []
    facts = [f for f in facts_at(ls, uri, at.start, doc.source) if f.kind in DRAWABLE]
    out = []
    for f in facts:  # one per instantiation the file makes of the template the object is declared in
        where = f.shown_as(facts)
        title = f"CuTeGen: show layout of {f.name}" + (f" {where}" if where.startswith("in ") else "")
        out.append(types.CodeAction(title=title, kind=types.CodeActionKind.Empty,
                                    command=types.Command(title=title, command=SHOW_COMMAND,
                                                          arguments=[_place(uri, f)])))
    return out


def layout_code_lenses(ls: CuteGenServer, uri: str, text: str) -> list[types.CodeLens]:
    """"Layouts: N objects" above each kernel that declares probed CuTe objects, opening the first drawable
    one (for code_lens.py to append)."""
    path = path_of(uri)
    if path is None:
        return []
    _, facts = facts_for_text(ls, path, text)
    found = [a for a in kernels.anchors(text) if a.kind == "kernel"]
    out = []
    for i, a in enumerate(found):
        end = found[i + 1].line if i + 1 < len(found) else 1 << 30
        inside = [f for f in facts if a.line < f.line - 1 < end]
        drawable = [f for f in inside if f.kind in DRAWABLE]
        if not drawable:
            continue
        names = len({(f.name, f.line) for f in inside})
        at = types.Range(start=types.Position(line=a.top, character=0), end=types.Position(line=a.top, character=0))
        first = drawable[0]
        out.append(types.CodeLens(range=at, command=types.Command(
            title=f"Layouts: {names} CuTe objects", command=SHOW_COMMAND, arguments=[_place(uri, first)])))
    return out


def _place(uri: str, f: LayoutFact) -> dict:
    place = {"uri": uri, "line": f.line - 1, "character": f.col - 1}
    return place | ({"instantiation": f.instantiation} if f.instantiation else {})


class HintRefresh:
    """The layout service's `on_done`, on the probe thread: logs a failed probe and has the client ask for its
    inlay hints again, on the event loop of the checks that start probes (the service is made with the server,
    before any loop runs: the first published check hands its loop over)."""

    def __init__(self, server: CuteGenServer) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, path: Path, result: ProbeResult) -> None:
        if result.problem:
            self.server.log(f"{path.name}: layout probe: {result.problem}")
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.refresh)

    def refresh(self) -> None:
        if self.server.supports("workspace.inlay_hint.refresh_support"):
            self.server.workspace_inlay_hint_refresh(None)


def service(server: CuteGenServer, on_done: HintRefresh) -> LayoutService:
    """The server's layout service (CuteGenServer.__init__); `register` starts its probes after clean checks."""
    return LayoutService(lambda path: server.session.layout_probe(path), on_done=on_done)


def register(server: CuteGenServer) -> None:
    def after_check(job, result) -> None:  # a published check, on the event loop
        if not result.ok or not job.saved or result.cancelled:
            return
        if server.layout_refresh.loop is None:
            server.layout_refresh.loop = asyncio.get_running_loop()
        doc = server.open_document(job.uri)
        try:
            text = doc.source if doc else job.path.read_text(errors="replace")
        except OSError:
            return
        server.layout_service.start(job.path, text)

    server.checks.listeners.append(after_check)

    @server.command(PICTURE_COMMAND)  # `ls` bare, as in every command handler: commands.register says why
    async def layout_picture(ls, a: PlaceArgs) -> dict:  # decoded before it gets here (arguments.py)
        return await picture_for(ls, attrs.asdict(a))

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hint(ls: CuteGenServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        doc = ls.open_document(params.text_document.uri)
        if doc is None:
            return []
        from cutegen.lsp import profile_lens  # the hot lines' marks share the one inlay-hint handler

        return inlay_hints(ls, params.text_document.uri, doc.source, ls.session.settings.layout_inlay_hints,
                           params.range.start.line, params.range.end.line) + profile_lens.inlay_hints(
            ls, params.text_document.uri, doc.source, params.range.start.line, params.range.end.line)


async def picture_for(ls: CuteGenServer, args: dict) -> dict:
    """{title, svg, kind} of the object at args' uri/line/character, or {error} saying why there is none."""
    uri = args.get("uri", "")
    doc, path = ls.open_document(uri), path_of(uri)
    if doc is None or path is None:
        return {"error": "open the file first"}
    position = types.Position(line=int(args.get("line", 0)), character=int(args.get("character", 0)))
    facts = facts_at(ls, uri, position, doc.source)
    if not facts:
        state = _service(ls).lookup(path, doc.source).state
        why = {COMPUTING: "the layouts are being computed; try again in a moment",
               READY: nothing_at(doc.source, position.line + 1)}.get(
            state, "save the file: layouts are computed after a clean check")
        return {"error": why}
    wanted = args.get("instantiation")
    fact = next((f for f in facts if f.instantiation == wanted), facts[0])

    def draw() -> str:
        tc = ls.session.builder(path).toolchain
        declared = (doc.source.splitlines() or [""])[min(fact.line, len(doc.source.splitlines()) or 1) - 1]
        cutlass = ls.session.file_flags(path).cutlass_include  # the project's own CUTLASS where it has one
        return picture(fact, tc.nvcc, cutlass, ls.session.state_dir(path).layout_pictures,
                       declared=declared)

    try:
        svg = await asyncio.to_thread(draw)
    except NotDrawable as e:
        return {"error": f"no picture of {fact.name}: {e}"}
    return {"title": fact.line_text(True), "kind": fact.kind, "svg": svg,
            "instantiations": [f.instantiation for f in facts if f.instantiation],
            "shown": fact.shown_as(facts),  # 'in gemm_tn<half_t, half_t> (1 of 2)'; '' outside templates
            "others": [{"label": f.shown_as(facts), "arguments": _place(uri, f)} for f in facts
                       if f.instantiation and f is not fact]}
