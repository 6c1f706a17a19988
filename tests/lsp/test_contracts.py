"""The server and the VS Code extension agree by test, not by copy: command ids, and the levels a run's verdict
can have (the extension keeps no verdict list; the server sends each verdict's level with its summary)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutegen.harness.verdicts import Verdict
from cutegen.lsp.command_ids import Command
from cutegen.profiler.signals import ProfileVerdict

CORE = Path(__file__).resolve().parents[2] / "vscode-client" / "src" / "core"
pytestmark = pytest.mark.skipif(not CORE.is_dir(), reason="no vscode-client/ beside the server")


def test_the_extension_runs_exactly_the_server_commands():
    ids = set(re.findall(r'"(cutegen\.server\.\w+)"', (CORE / "commands.ts").read_text()))
    assert ids == {c.value for c in Command}


def test_every_verdict_level_is_one_the_extension_shows():
    results = (CORE / "results.ts").read_text()
    levels = set(re.findall(r'"(\w+)"', re.search(r"RUN_LEVELS = new Set\(\[(.*?)\]\)", results).group(1)))
    assert {v.level for v in Verdict} | {v.level for v in ProfileVerdict} <= levels
    # No copy of the server's verdict names: the two it used to list were never sent.
    assert '"no-gpu"' not in results and '"skipped"' not in results
    for verdict in [v for v in [*Verdict, *ProfileVerdict] if v.value not in levels]:  # "error" is both
        assert f'"{verdict.value}"' not in results, f"results.ts spells the verdict {verdict.value!r}"


def test_the_server_registers_every_command():
    from cutegen.lsp.server import create_server

    server = create_server()
    registered = set(server.protocol.fm.commands)
    assert {c.value for c in Command} <= registered


def test_every_command_has_its_argument_shape():
    """A command's arguments are decoded to its shape before its handler runs (arguments.py): one left out of
    SHAPES would reach its handler raw."""
    from cutegen.lsp.arguments import SHAPES

    assert {c.value for c in Command} - set(SHAPES) == set()


def test_every_verdict_a_kernel_can_get_has_a_knowledge_base_entry():
    """The knowledge base follows the harness's vocabulary: each failing verdict is recognized by an entry (a build
    failure is explained by the entries of its compile diagnostics, `error` by its traceback)."""
    pytest.importorskip("yaml")
    pytest.importorskip("bm25s")
    from cutegen.knowledge import KnowledgeBase

    covered = {v for e in KnowledgeBase.load().entries for v in e.recognize.verdicts}
    elsewhere = {Verdict.BUILD_FAILED, Verdict.ERROR}
    needed = {v.value for v in Verdict if v.level == "error" and v not in elsewhere}
    assert needed <= covered, sorted(needed - covered)


def test_the_extension_reads_the_background_loop_as_the_server_sends_it():
    from cutegen.background import Stage
    from cutegen.lsp.background import LOOP_NOTIFICATION, STATES

    loop = (CORE / "loop.ts").read_text()
    assert f'LOOP_NOTIFICATION = "{LOOP_NOTIFICATION}"' in loop
    listed = lambda name: set(re.findall(r'"(\w+)"', re.search(rf"{name} = new Set\(\[(.*?)\]\)", loop).group(1)))
    assert listed("STAGES") == {s.value for s in Stage} and listed("STATES") == set(STATES)
