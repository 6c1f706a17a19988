"""The extension's unit tests (vscode-client/test/unit/searchSummary.test.ts) read the figures a search's proposal
carries from a fixture captured from the engine (vscode-client/test/unit/fixtures/search-figures.json): the engine
must still send them, so that the sentence the editor makes of them is made of fields the server really sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.tree_landscapes import START, search_figures

FIXTURE = Path(__file__).resolve().parents[2] / "vscode-client" / "test" / "unit" / "fixtures" / "search-figures.json"
pytestmark = pytest.mark.skipif(not FIXTURE.is_file(), reason="no vscode-client/ beside the server")


def engine_figures(tmp_path: Path) -> dict:
    out = {}
    for name, objective in (("time", "time"), ("energy", "energy"), ("untimed", None)):
        kernel = tmp_path / name / "k.cu"
        kernel.parent.mkdir()
        kernel.write_text(START)
        out[name] = search_figures(kernel.parent / ".cutegen", kernel, objective)
    return json.loads(json.dumps(out))


def test_the_extensions_search_fixture_is_what_the_engine_sends(tmp_path):
    assert engine_figures(tmp_path) == json.loads(FIXTURE.read_text())
