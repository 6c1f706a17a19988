"""`cutegen layout FILE:LINE[:COL] [--svg OUT] [--json]`, called through its own module (cli/__init__.py wires it)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from cutegen.cli import layout as cli_layout

KERNEL = Path(__file__).with_name("small_kernel.cu")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def state(tmp_path_factory, toolchain) -> Path:
    return tmp_path_factory.mktemp("cli_state")  # shared: one probe build for the module


def layout(state: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="cutegen")
    cli_layout.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["layout", *argv, "--state-dir", str(state)])
    return args.run(args)


def test_one_line_per_instantiation_prefixed_by_template_arguments(state, capsys):
    assert layout(state, f"{KERNEL}:10") == 0
    assert capsys.readouterr().out.splitlines() == [
        "[kTile=64] layout: (_64,_4):(_4,_1)",
        "[kTile=128] layout: (_128,_4):(_4,_1)",
    ]


def test_a_declaration_outside_any_dependence_prints_once(state, capsys):
    assert layout(state, f"{KERNEL}:8:10") == 0
    assert capsys.readouterr().out == "g: gmem float (int):(_1)\n"


def test_json(state, capsys):
    assert layout(state, f"{KERNEL}:9", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["line"], r["kind"], r["instantiation"]) for r in rows] == [
        ("tiles", 9, "Tensor", "kTile=64"), ("tiles", 9, "Tensor", "kTile=128")]
    assert rows[0]["layout"] == "gmem float ((_64),(int)):((_1),(_64))"


def test_svg_of_a_swizzled_smem_tensor_shows_banks(state, tmp_path, capsys):
    out = tmp_path / "s.svg"
    assert layout(state, f"{KERNEL}:12", "--svg", str(out)) == 0
    svg = out.read_text()
    assert svg.startswith("<svg") and "b0" in svg and "Sw&lt;3,2,3&gt;" in svg and "lanes" in svg


def test_nothing_declared_there(state, capsys):
    assert layout(state, f"{KERNEL}:13") == 1
    assert "no CuTe object declared here" in capsys.readouterr().err


def test_bad_place_and_missing_file(state, capsys):
    assert layout(state, "nocolon") == 2
    assert layout(state, "missing.cu:3") == 2
    assert "missing.cu: no such file" in capsys.readouterr().err


def test_dynamic_layout_has_no_picture(state, tmp_path, capsys):
    assert layout(state, f"{KERNEL}:8", "--svg", str(tmp_path / "g.svg")) == 1
    assert "only layouts known at compile time" in capsys.readouterr().err


def test_a_file_with_errors_still_shows_what_the_compiler_could_name(state, tmp_path, capsys):
    broken = tmp_path / "broken.cu"
    broken.write_text(KERNEL.read_text().replace("s(threadIdx.x) =", "undeclared_thing(threadIdx.x) ="))
    assert layout(state, f"{broken}:10") == 0
    captured = capsys.readouterr()
    assert "[kTile=64] layout: (_64,_4):(_4,_1)" in captured.out
    assert "note: the file has errors (first at line 13" in captured.err
