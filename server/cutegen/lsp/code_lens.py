"""CodeLens above each `__global__` kernel and above `cutegen_forward`: resources from the latest
check, figures from the latest test/bench/profile runs, and the Test / Profile / Optimize commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.lsp import kernels, layouts, profile_lens, runs, versions
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import is_checked, path_of

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

ACTIONS = (("Test", Command.TEST.value), ("Profile", Command.PROFILE.value), ("Profile Lines", Command.PROFILE_LINES.value),
           ("Optimize", Command.OPTIMIZE.value))


def lenses(ls: CuteGenServer, uri: str, text: str) -> list[types.CodeLens]:
    path = path_of(uri)
    if path is None or not is_checked(path):
        return []
    found = kernels.anchors(text)
    if not found:
        return []
    result = ls.session.latest_check(path)
    # Run figures and actions belong to the entry point: the launcher, else the first kernel.
    entry = next((a for a in found if a.kind == "launcher"), found[0])
    out = []
    for a in found:
        kernel = a.name if a.kind == "kernel" else None
        out.append(_lens(a, runs.resources_title(result, kernel), Command.CHECK.value, [uri]))
        if a is entry:
            out += _run_lenses(ls, a, uri, path)
    return out + layouts.layout_code_lenses(ls, uri, text) + versions.code_lenses(ls, uri, text)


def _run_lenses(ls: CuteGenServer, a: kernels.Anchor, uri: str, path) -> list[types.CodeLens]:
    # test, bench and profile figures, marked running… or stale, and a regression (background loop: lsp/background.py)
    out = [_lens(a, title, command, [uri]) for title, command in ls.loop.code_lenses(uri, path)]
    out += [_lens(a, title, command, [uri]) for title, command in ACTIONS]
    return out + profile_lens.code_lenses(ls, a, uri, path)


def _lens(a: kernels.Anchor, title: str, command: str, arguments: list) -> types.CodeLens:
    top = a.top  # above the declaration's first line: a lens between `__launch_bounds__(…)` and the name splits it
    at = types.Range(start=types.Position(line=top, character=a.start if top == a.line else 0),
                     end=types.Position(line=top, character=a.end if top == a.line else 0))
    return types.CodeLens(range=at, command=types.Command(title=title, command=command, arguments=arguments))


def register(server: CuteGenServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: CuteGenServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        doc = ls.open_document(params.text_document.uri)
        return lenses(ls, params.text_document.uri, doc.source) if doc else []
