"""The Versions view's unit tests (vscode-client/test/unit/versions.test.ts) read a versions reply captured from
the engine (vscode-client/test/unit/fixtures/versions-reply.json): the engine must still answer it, so that the
extension is tested against what the server sends, not against a shape typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lsp.test_version_tree import START, _grow

FIXTURE = Path(__file__).resolve().parents[2] / "vscode-client" / "test" / "unit" / "fixtures" / "versions-reply.json"
pytestmark = pytest.mark.skipif(not FIXTURE.is_file(), reason="no vscode-client/ beside the server")


def test_the_extensions_fixture_is_what_the_engine_answers(tmp_path):
    ws = tmp_path.resolve() / "ws"
    ws.mkdir()
    path = ws / "k.cu"
    path.write_text(START)
    view = _grow(path).view(START)
    captured = json.loads(FIXTURE.read_text())["tree"]
    now = json.loads(json.dumps(view).replace(str(ws), "/ws"))
    assert now.pop("tree").endswith("/tree.json") and captured.pop("tree").endswith("/tree.json")  # a path's hash
    assert now == captured
