"""Mismatch reports name the pattern of the error, which usually points at the bug."""

from __future__ import annotations

import torch

from cutegen.harness.compare import compare


def _ref():
    torch.manual_seed(0)
    return torch.randn(64, 1000)


def test_match_within_tolerance_is_none():
    r = _ref()
    assert compare(r + 1e-6, r, 1e-4, 1e-4) is None


def test_unwritten_tail_is_named_tail_with_nan():
    r = _ref()
    o = r.clone()
    o.view(-1)[-37:] = float("nan")
    m = compare(o, r, 1e-4, 1e-4)
    assert m.pattern == "tail" and m.bad == 37 and "last 37 elements" in m.message and "NaN" in m.message
    assert m.first_bad_index == [63, 963]


def test_row_tail_strided_blocks_everything():
    r = _ref()
    o = r.clone(); o[:, -3:] += 1
    assert compare(o, r, 1e-4, 1e-4).pattern == "row-tail"
    o = r.clone(); o.view(-1)[5::32] += 1
    m = compare(o, r, 1e-4, 1e-4)
    assert m.pattern == "periodic" and "every 32" in m.message
    o = r.clone(); o.view(-1)[2048:4096] = 0
    assert compare(o, r, 1e-4, 1e-4).pattern == "tile-blocks"
    assert compare(torch.zeros_like(r), r, 1e-4, 1e-4).pattern == "everything"


def test_shape_and_dtype_mismatch_are_plain():
    r = _ref()
    assert "shape (64, 999)" in compare(r[:, :-1], r, 1e-4, 1e-4).message
    assert compare(r.half(), r, 1e-2, 1e-2).pattern == "dtype"


def test_nan_in_output_never_passes_even_with_huge_tolerance():
    r = _ref()
    o = r.clone(); o[3, 3] = float("nan")
    assert compare(o, r, 1e9, 1e9).bad == 1
