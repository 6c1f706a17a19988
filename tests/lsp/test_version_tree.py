"""The kernel's tree of versions in the editor (lsp/versions.py): the tree for a tree view, one version's diff, a
CodeLens and a quick fix naming the best verified better version, which restore it re-verified as a patch that
applies like every proposal. The tree is grown with agent/tree.py's own API from the judge's Verifications
(`candidates._compare`, as the GPU path makes them); the restore's re-verification is a real nvcc compile. Last, a
real search through the editor's Optimize (the scripted model of tests/agent/test_search.py)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from cutegen.agent.search import ratio_of
from cutegen.agent.tree import VersionTree
from cutegen.state import StateDir
from lsp_helpers import execute, needs_nvcc, restore_lenses
from tests.agent.test_search import GOOD, PROBLEM, _landscape, _timed
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.asyncio, needs_nvcc]

TEXT = """#include <cutegen/abi.h>

__global__ void k(float* y) {{
  int i = threadIdx.x;
  y[i] = {value};
}}
"""
START, VECTORIZED, GRID, SLOWER = (TEXT.format(value=v) for v in ("0.5f", "1.0f * 0.5f", "0.5f + 0.0f", "0.5f * 1.0f"))


def _grow(path) -> VersionTree:
    """start (6 ms) → vectorize (3 ms, 2×) → grid shape (2.4 ms, 1.25× more); a slower sibling that failed."""
    tree = VersionTree(StateDir.for_file(path, [path.parent]), path)
    root = tree.root(START, {"median_ms": 6.0, "spread": 0.01}, "compiles · 6.000 ms", "verified", None)
    steps = [(root, VECTORIZED, "vectorize", _timed(6.0, 3.0), 1), (None, GRID, "grid shape", _timed(3.0, 2.4), 2),
             (root, SLOWER, "fuse", _timed(6.0, 6.6), 1)]
    parent = root
    for at, text, change, v, step in steps:
        parent = tree.add(at or parent, text, change, ok=v.ok, verdict=str(v.verdict), label=v.label,
                          figures=v.figures, ratio=ratio_of(v), record=None, step=step)
    return tree


async def test_the_tree_the_best_version_as_lens_and_quick_fix_and_its_restore(client, workspace):
    path = workspace / "k.cu"
    path.write_text(START)
    tree = _grow(path)
    grid = next(n for n in tree.nodes.values() if n.change == "grid shape")
    uri = open_in_editor(client, path, START)

    answer = await execute(client, "cutegen.server.versions", {"uri": uri})
    view = answer["tree"]
    assert answer["ok"] and answer["message"] == f"4 versions of k.cu; the best: {grid.id[:10]} 2.50× ±2%"
    root = next(n for n in tree.nodes.values() if n.parent is None)
    assert (view["size"], view["failures"], view["current"]) == (4, 1, root.id)
    assert [(v["change"], v["ratio"], v["verdict"], v["current"], v["best"]) for v in view["versions"]] == [
        ("", "1.00×", "verified", True, False), ("vectorize", "2.00× ±2%", "verified", False, False),
        ("fuse", "0.91× ±2%", "not-faster", False, False), ("grid shape", "2.50× ±2%", "verified", False, True)]
    assert view["best"]["path"] == ["vectorize", "grid shape"]

    shown = await execute(client, "cutegen.server.showVersion", {"uri": uri, "id": grid.id[:8]})
    assert shown["ok"] and shown["version"]["text"] == GRID
    assert "-  y[i] = 0.5f;\n+  y[i] = 0.5f + 0.0f;" in shown["version"]["diff"]
    missing = await execute(client, "cutegen.server.showVersion", {"uri": uri, "id": "zzzz"})
    assert not missing["ok"] and "k.cu has no version 'zzzz'" in missing["message"]

    (lens,) = await restore_lenses(client, uri)
    assert lens.command.title == f"Best version {grid.id[:10]}: 2.50× ±2% (vectorize → grid shape)"
    assert lens.range.start.line == 2  # on the kernel
    kernel_line = types.Range(start=types.Position(line=2, character=18), end=types.Position(line=2, character=18))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=kernel_line,
        context=types.CodeActionContext(diagnostics=[])))
    (action,) = [a for a in actions if a.command.command == "cutegen.server.restoreVersion"]
    assert action.title.startswith(f"CuTeGen: restore the best version {grid.id[:10]} (2.50× ±2%, vectorize → grid")
    elsewhere = types.Range(start=types.Position(line=4, character=2), end=types.Position(line=4, character=2))
    assert not await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=elsewhere,
        context=types.CodeActionContext(diagnostics=[])))  # a lightbulb on the kernel only

    restored = await execute(client, action.command.command, *action.command.arguments)
    assert restored["ok"] and restored["patch"]["new_text"] == GRID and restored["patch"]["action"] == "restore"
    assert "restores version" in restored["message"] and "re-verified" in restored["message"]
    applied = await execute(client, "cutegen.server.applyPatch", {"id": restored["patch"]["id"], "uri": uri,
                                                                    "version": restored["patch"]["version"]})
    assert applied["applied"] is True and client.docs[uri] == (2, GRID)
    # the file holds the best version now: nothing left to offer, and the tree marks it current
    assert not await restore_lenses(client, uri)
    view = (await execute(client, "cutegen.server.versions", {"uri": uri}))["tree"]
    assert view["current"] == grid.id


async def test_no_tree_no_offer_and_bad_arguments_are_named(client, workspace):
    path = workspace / "plain.cu"
    path.write_text(START)
    uri = open_in_editor(client, path, START)
    answer = await execute(client, "cutegen.server.versions", {"uri": uri})
    assert answer["ok"] and answer["tree"]["size"] == 0 and answer["message"].startswith("No versions of plain.cu yet")
    assert not await restore_lenses(client, uri)
    with pytest.raises(Exception, match=r"cutegen.server.restoreVersion: arguments\[0\].id: missing"):
        await execute(client, "cutegen.server.restoreVersion", {"uri": uri})
    gone = await execute(client, "cutegen.server.restoreVersion", {"uri": uri, "id": "abc"})
    assert not gone["ok"] and "plain.cu has no version 'abc'" in gone["message"]


@pytest.mark.replies(_landscape())
@pytest.mark.cutegen_settings({"optimizeSearch": "beam:1x2", "optimizeSteps": 1})
async def test_optimize_with_a_search_grows_the_tree_the_view_lists(client, workspace):
    """A real search through the editor's Optimize (scripted model, real nvcc, no GPU here): its versions are in
    the view's tree, not timed; without a measured better version there is no lens to offer."""
    (workspace / "k.py").write_text(PROBLEM)
    path = workspace / "k.cu"
    path.write_text(GOOD)
    uri = open_in_editor(client, path, GOOD)
    refreshes = client.code_lens_refreshes
    answer = await execute(client, "cutegen.server.optimize", {"uri": uri, "version": 1})
    assert answer["ok"] and "3 versions in the tree" in answer["message"] and "speed not measured" in answer["message"]
    assert client.code_lens_refreshes > refreshes  # the lens is asked for again: a search may have found a best
    view = (await execute(client, "cutegen.server.versions", {"uri": uri}))["tree"]
    assert sorted((v["change"][:8], v["verdict"], v["ratio"]) for v in view["versions"]) == [
        ("", "verified", "not timed"), ("128-bit ", "check-failed", "not timed"),
        ("More byt", "verified", "not timed")]
    assert view["best"] is None and not await restore_lenses(client, uri)
