"""SVG pictures: offsets, banks and conflicts, TV ownership (no compiler; the offsets themselves are checked
against CuTe on the host in test_exact.py)."""

from __future__ import annotations

import html
import re

import pytest

from cutegen.layouts.pictures import NotDrawable, bank_conflicts, banks_svg, evaluate, grid_svg, picture, tv_copy_svg
from cutegen.layouts.probe import LayoutFact


def _labels(svg: str) -> list[str]:
    return re.findall(r'text-anchor="middle">([^<]*)</text>', svg)


def test_grid_shows_every_offset_of_a_column_major_layout():
    svg = grid_svg("t", "(_4,_8):(_1,_4)")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert sorted(int(v) for v in _labels(svg)) == list(range(32))
    assert "t: (_4,_8):(_1,_4)" in svg


def test_unswizzled_column_read_is_an_8_way_conflict_and_the_swizzle_removes_it():
    plain = evaluate("(_8,_64):(_64,_1)")  # 8 rows of 128 bytes of 16-bit elements
    swizzled = evaluate("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    assert len(bank_conflicts(plain, 16)[1]) == 8
    assert bank_conflicts(swizzled, 16)[1] == set()
    assert "8 of 8 lanes conflict" in banks_svg("p", "(_8,_64):(_64,_1)", 16)
    assert "no bank conflict" in banks_svg("s", "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", 16)


def test_swizzle_moves_16_byte_chunks_by_row():
    sw = evaluate("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    assert [sw.at(m, 0) for m in range(8)] == [m * 64 + m * 8 for m in range(8)]


def test_tv_picture_names_the_thread_and_value_of_each_element():
    svg = tv_copy_svg("copy", "((_8,_16),_4):((_64,_1),_16)", "(_16,_32)")
    labels = _labels(svg)
    assert labels.count("T0") == 4 and "T127" in labels  # 128 threads x 4 values cover the 16x32 tile


def test_dynamic_layouts_are_not_drawn_and_say_why():
    with pytest.raises(NotDrawable, match="'int' is not a static"):
        grid_svg("t", "(int,_8):(_8,_1)")
    fact = LayoutFact("cta_coord", 1, 1, "Tuple", "(int,int,_)")
    with pytest.raises(NotDrawable, match="Tuple"):
        picture(fact, "nvcc", "/nowhere", None)


def test_a_copy_or_mma_the_probe_spelled_unexpectedly_is_not_drawn_and_says_why(tmp_path):
    """A CUTLASS version that prints these types otherwise answers with the reason, not an internal error."""
    copy = LayoutFact("tiled_copy", 3, 10, "TiledCopy", "TiledCopy with no layouts printed")
    with pytest.raises(NotDrawable, match="no TV layout and tiler"):
        picture(copy, "nvcc", "/nowhere", tmp_path)
    mma = LayoutFact("thr_mma", 4, 10, "ThrMMA", "ThrMMA", type="cute::ThrMMA")
    with pytest.raises(NotDrawable, match="not a ThrMMA<TiledMMA"):
        picture(mma, "nvcc", "/nowhere", tmp_path)


def test_smem_tensor_gets_the_bank_picture():
    fact = LayoutFact("sA", 3, 10, "Tensor", "smem half_t Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    svg = picture(fact, "nvcc", "/nowhere", None)
    assert "b0" in svg and "no bank conflict" in svg


def test_byte_swizzles_of_sm90_layouts_become_element_swizzles():
    """GMMA layouts swizzle byte addresses: Sw<3,4,3> on 16-bit elements is Sw<3,3,3> on their offsets."""
    composed = evaluate("Sw<3,4,3> o smem_ptr_flag_bits<16> o (_8,_64):(_64,_1)")
    pointer = evaluate("Sw<3,4,3> (_8,_64):(_64,_1)", element_bits=16)  # a Tensor's swizzled smem pointer
    element = evaluate("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    every = range(element.size)
    assert [composed(i) for i in every] == [pointer(i) for i in every] == [element(i) for i in every]
    with pytest.raises(NotDrawable, match="unknown element size"):
        evaluate("Sw<3,4,3> (_8,_64):(_64,_1)")


def _size_of(svg: str) -> tuple[int, int]:
    m = re.search(r'<svg[^>]* width="(\d+)" height="(\d+)"', svg)
    return int(m[1]), int(m[2])


def _offsets(svg: str) -> list[int]:
    """Every offset the picture shows: in a cell, or in its tooltip where cells are too small for text."""
    shown = [int(v) for v in _labels(svg) if v.isdigit()]
    return shown + [int(v) for v in re.findall(r"<title>[^<]*→ (\d+)</title>", svg)]


@pytest.mark.parametrize("layout, elements", [("_8192:_1", 8192), ("(_8,_1024):(_1,_8)", 8192),
                                              ("(_64,_256):(_256,_1)", 16384), ("_100:_2", 100)])
def test_long_modes_fold_into_rows_so_the_picture_stays_readable(layout, elements):
    svg = grid_svg("tile", layout)
    width, height = _size_of(svg)
    assert width <= 1600 and height <= 1600, (width, height)  # was 4400 x 82 for the 8192-element strip
    assert elements < 4096 or 0.25 <= width / height <= 4, (width, height)  # a large one comes out near square
    assert sorted(_offsets(svg)) == sorted({evaluate(layout)(i) for i in range(elements)})  # nothing left out


def test_a_short_layout_keeps_its_one_row_and_its_labels():
    svg = grid_svg("t", "_16:_1")
    assert _size_of(svg)[1] < 120 and _labels(svg)[:16] != [] and "<title>0" not in svg


def test_a_partition_picture_says_which_thread_it_shows():
    fact = LayoutFact("tAgA", 20, 10, "Tensor", "gmem float ((_4,_1),_4,_1):((_1,_0),_64,_0)")
    svg = html.unescape(picture(fact, "nvcc", "/nowhere", None, declared="  Tensor tAgA = thr_copy.partition_S(gA);"))
    assert "thread 0's partition; every thread's has this layout" in svg
    plain = picture(fact, "nvcc", "/nowhere", None, declared="  Tensor tAgA = make_tensor(p, layout);")
    assert "thread" not in plain
