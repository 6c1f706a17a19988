"""The editor's "best version" (CodeLens, quick fix, the Versions view's reply, Restore Best) is the tree's
(agent/tree.py `VersionTree.best`): by the objective the tree was searched with, never an untimed version. The
trees are grown with the tree's own API from the judge's Verifications; Restore Best's re-verification is a real
nvcc compile."""

from __future__ import annotations

import pytest
from lsprotocol import types

from cutegen.state import StateDir
from lsp_helpers import execute, needs_nvcc, restore_lenses
from tests.agent.tree_landscapes import BEST, CHANGES, START, searched, untimed
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.asyncio, needs_nvcc]


async def _lens_titles(client, uri: str) -> list[str]:
    return [lens.command.title for lens in await restore_lenses(client, uri)]


async def test_lens_quick_fix_view_and_restore_best_follow_the_energy_objective(client, workspace):
    path = workspace / "k.cu"
    path.write_text(START)
    tree = searched(StateDir.for_file(path, [path.parent]), path, "energy")  # by time the best would be A
    b = next(n for n in tree.nodes.values() if n.change == BEST["energy"])
    uri = open_in_editor(client, path, START)

    assert await _lens_titles(client, uri) == [f"Best version {b.id[:10]}: 2.50× energy ±2% ({BEST['energy']})"]
    kernel_line = types.Range(start=types.Position(line=2, character=18), end=types.Position(line=2, character=18))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=kernel_line,
        context=types.CodeActionContext(diagnostics=[])))
    (action,) = [a for a in actions if a.command.command == "cutegen.server.restoreVersion"]
    assert action.command.arguments[0]["id"] == b.id
    answer = await execute(client, "cutegen.server.versions", {"uri": uri})
    assert answer["tree"]["objective"] == "energy" and answer["tree"]["best"]["id"] == b.id
    assert answer["message"].endswith(f"the best: {b.id[:10]} 2.50× energy ±2%")

    restored = await execute(client, "cutegen.server.restoreBest", {"uri": uri})
    assert restored["ok"] and restored["patch"]["new_text"] == CHANGES[BEST["energy"]][0], restored["message"]


async def test_no_lens_for_untimed_versions_and_the_reply_says_why(client, workspace):
    path = workspace / "u.cu"
    path.write_text(START)
    untimed(StateDir.for_file(path, [path.parent]), path)
    uri = open_in_editor(client, path, START)
    assert await _lens_titles(client, uri) == []
    answer = await execute(client, "cutegen.server.versions", {"uri": uri})
    assert answer["tree"]["best"] is None and not any(v["best"] for v in answer["tree"]["versions"])
    assert "none is best: no verified version was timed" in answer["message"]
