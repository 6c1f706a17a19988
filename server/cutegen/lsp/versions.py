"""The open kernel's tree of versions (agent/tree.py, grown by Optimize searches) in the editor.

- `cutegen.server.versions` [{uri}]: the whole tree for a tree view (every version: parent, change, ratio
  against the latest search's start ± the judge's noise, verdict; which one is the file's text; the best).
- `cutegen.server.showVersion` [{uri, id}]: one version's text and the diff from the file's text to it.
- `cutegen.server.restoreVersion` [{uri, id, version}]: the version re-verified and offered as a patch, which
  the editor shows as a diff (like every proposal) and applies with applyPatch.
- A CodeLens on the kernel naming the best version (`VersionTree.best`: by the objective the tree was searched
  with) and its ratio, and the same offered as a quick
  fix on the kernel's declaration; both run restoreVersion. Neither reads more than tree.json: no compile.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.agent.tree import VersionTree
from cutegen.lsp import kernels
from cutegen.lsp.arguments import FileArgs, PatchArgs
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import is_checked, path_of
from cutegen.lsp.gpu_commands import reply, say
from cutegen.toolchain import ToolchainError

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

VERSIONS, SHOW, RESTORE = Command.VERSIONS.value, Command.SHOW_VERSION.value, Command.RESTORE_VERSION.value


def _tree(ls: CuteGenServer, uri: str) -> tuple[VersionTree, str] | None:
    """The kernel's tree and the file's text (the editor's copy when open), or None when it is not a file."""
    path = path_of(uri)
    doc = ls.open_document(uri)
    if path is None or (doc is None and not path.is_file()):
        return None
    text = doc.source if doc is not None else path.read_text(errors="replace")
    return VersionTree(ls.session.state_dir(path).path, path), text


def versions(ls: CuteGenServer, uri: str) -> dict:
    found = _tree(ls, uri)
    if found is None:
        return reply(False, f"{Path(uri).name}: no such file")
    tree, text = found
    view = tree.view(text)
    if not tree.nodes:
        return reply(True, f"No versions of {Path(uri).name} yet: Optimize with a search (cutegen.optimizeSearch "
                           "beam:WxK) keeps every version it verifies.", tree=view)
    best = view["best"]
    return reply(True, f"{view['size']} versions of {Path(uri).name}" + (
        f"; the best: {best['id'][:10]} {best['ratio']}" if best else f"; none is best: {view['no_best']}"), tree=view)


def show(ls: CuteGenServer, uri: str, vid: str) -> dict:
    found = _tree(ls, uri)
    if found is None:
        return reply(False, f"{Path(uri).name}: no such file")
    tree, text = found
    version = tree.version(vid, text)
    if version is None:
        return reply(False, f"{Path(uri).name} has no version {vid!r} (or more than one starts so, or its text is "
                            f"gone from {tree.folder / 'versions'})")
    return reply(True, f"version {version['id'][:10]}: {version['change'] or 'the start'} · {version['ratio']}",
                 version=version)


def _offer(ls: CuteGenServer, uri: str, text: str) -> dict | None:
    """The best verified better version, when the file's text is not it already (None otherwise)."""
    path = path_of(uri)
    if path is None or not is_checked(path):
        return None
    tree = VersionTree(ls.session.state_dir(path).path, path)
    best = tree.best()
    if best is None:
        return None
    view = tree.view(text)
    return None if view["current"] == best.id else view["best"]


def _title(best: dict) -> str:
    path = " → ".join(best["path"]) or best["change"]
    return f"Best version {best['id'][:10]}: {best['ratio']} ({path})"


def _arguments(ls: CuteGenServer, uri: str, vid: str) -> list:
    doc = ls.open_document(uri)
    return [{"id": vid, "uri": uri, **({"version": doc.version} if doc is not None and doc.version is not None
                                       else {})}]


def code_lenses(ls: CuteGenServer, uri: str, text: str) -> list[types.CodeLens]:
    """On the entry point (the launcher, else the first kernel): the best version and its ratio; runs restore."""
    found = kernels.anchors(text)
    best = _offer(ls, uri, text) if found else None
    if best is None:
        return []
    a = next((a for a in found if a.kind == "launcher"), found[0])
    at = types.Range(start=types.Position(line=a.top, character=0), end=types.Position(line=a.top, character=0))
    return [types.CodeLens(range=at, command=types.Command(title=_title(best), command=RESTORE,
                                                           arguments=_arguments(ls, uri, best["id"])))]


def code_actions(ls: CuteGenServer, uri: str, want: types.Range) -> list[types.CodeAction]:
    """On a kernel's declaration: restore the best verified version (re-verified, then shown as a diff)."""
    doc = ls.open_document(uri)
    if doc is None:
        return []
    on_kernel = any(a.top <= want.start.line <= a.line or a.top <= want.end.line <= a.line
                    for a in kernels.anchors(doc.source))
    best = _offer(ls, uri, doc.source) if on_kernel else None
    if best is None:
        return []
    title = f"CuTeGen: restore the best version {best['id'][:10]} ({best['ratio']}, {' → '.join(best['path'])})"
    return [types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                             command=types.Command(title=_title(best), command=RESTORE,
                                                   arguments=_arguments(ls, uri, best["id"])))]


def register(server: CuteGenServer) -> None:

    # pygls reads a command handler's annotations at run time (commands.py says why `ls` stays bare)
    @server.command(VERSIONS)
    def versions_command(ls, a: FileArgs):
        return versions(ls, a.uri)

    @server.command(SHOW)
    def show_command(ls, a: PatchArgs):
        return show(ls, a.uri, a.id)

    @server.command(RESTORE)
    async def restore_command(ls, a: PatchArgs):
        try:
            return say(ls, await ls.agent.restore_version(a.uri, a.id))
        except ToolchainError as e:
            return say(ls, reply(False, str(e)))
