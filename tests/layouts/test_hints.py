"""Inlay hints and hover text from the layout service, called directly (one real probe build for the module)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types

from cutegen.layouts.probe import LayoutProbe
from cutegen.layouts.service import COMPUTING, READY, UNKNOWN, LayoutService
from cutegen.lsp.layouts import COMPUTING_TEXT, inlay_hints, layout_hover

pytestmark = pytest.mark.slow
SOURCE = Path(__file__).with_name("small_kernel.cu")


@pytest.fixture(scope="module")
def ls(toolchain, tmp_path_factory):
    from cutegen.settings import Settings

    work = tmp_path_factory.mktemp("hints")
    path = work / "small_kernel.cu"
    path.write_text(SOURCE.read_text())
    probe = LayoutProbe(toolchain, Settings(), work / ".cutegen")
    service = LayoutService(lambda p: probe)
    assert service.lookup(path, path.read_text()).state == UNKNOWN
    future = service.start(path, path.read_text())
    assert service.lookup(path, path.read_text()).state == COMPUTING
    future.result(timeout=600)
    assert service.lookup(path, path.read_text()).state == READY
    yield SimpleNamespace(layout_service=service, path=path, uri=path.as_uri(), text=path.read_text())
    service.close()


def _labels(hints):
    return {h.position.line: h.label for h in hints}


def test_modes(ls):
    assert inlay_hints(ls, ls.uri, ls.text, "off") == []
    short, every = _labels(inlay_hints(ls, ls.uri, ls.text, "short")), _labels(inlay_hints(ls, ls.uri, ls.text, "all"))
    assert set(short) <= set(every) and set(every) == {7, 8, 9, 11}
    assert every[9] == "layout: kTile=64: (_64,_4):(_4,_1) | kTile=128: (_128,_4):(_4,_1)"
    assert 8 not in short  # the two `tiles` instantiations together exceed 60 characters
    line = ls.text.splitlines()[7]
    (hint,) = [h for h in inlay_hints(ls, ls.uri, ls.text, "all") if h.position.line == 7]
    assert hint.position.character == len(line) and hint.padding_left  # after the declaration


def test_an_unsaved_edit_keeps_the_hints_of_declarations_that_stand(ls):
    lines = ls.text.splitlines()
    lines[9] = "  auto renamed = make_layout(make_shape(Int<kTile>{}, _4{}), LayoutRight{});"
    edited = "\n".join(lines) + "\n"
    labels = _labels(inlay_hints(ls, ls.uri, edited, "all"))
    assert 9 not in labels and 7 in labels and 11 in labels


def test_hover_on_a_use_and_on_a_declaration(ls):
    use = layout_hover(ls, ls.uri, types.Position(line=12, character=30), ls.text)  # size(layout)
    assert "**`layout`** — CuTe Layout (line 10)" in use and "[kTile=128] (_128,_4):(_4,_1)" in use
    assert layout_hover(ls, ls.uri, types.Position(line=12, character=3), ls.text) is None  # `if`


def test_code_action_and_code_lens_open_the_picture(ls):
    from cutegen.lsp.layouts import SHOW_COMMAND, layout_code_actions, layout_code_lenses

    ls.open_document = lambda uri: SimpleNamespace(source=ls.text)
    at = types.Range(start=types.Position(line=11, character=10), end=types.Position(line=11, character=10))
    (action,) = layout_code_actions(ls, ls.uri, at)
    assert action.title == "CuTeGen: show layout of s" and action.command.command == SHOW_COMMAND
    assert action.command.arguments == [{"uri": ls.uri, "line": 11, "character": 9}]
    (lens,) = layout_code_lenses(ls, ls.uri, ls.text)
    assert lens.range.start.line == 5 and lens.command.title == "Layouts: 4 CuTe objects"  # above `template <int kTile>`


def test_hover_while_a_new_version_is_computing(ls):
    """Runs last: it makes the edited text the newest version."""
    edited = ls.text.replace("_4{}), LayoutRight", "_2{}), LayoutRight")
    future = ls.layout_service.start(ls.path, edited)
    try:
        text = layout_hover(ls, ls.uri, types.Position(line=9, character=8), edited)
        assert text.startswith("**`layout`**") and "not probed yet" in text  # the last probed version's layout
    finally:
        result = future.result(timeout=600)
    assert "[kTile=64] (_64,_2):(_2,_1)" in layout_hover(ls, ls.uri, types.Position(line=9, character=8), edited)
    assert result.facts and COMPUTING_TEXT
