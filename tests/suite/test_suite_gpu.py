"""On a GPU: `cutegen suite run` over real examples, judged by the real harness in a worker per GPU."""

from __future__ import annotations

import pytest

from cutegen.cli import main
from cutegen.suite.store import load
from tests.support.suite_cases import ROOT

pytestmark = pytest.mark.gpu


def test_examples_are_judged_with_real_figures(tmp_path):
    ex = ROOT / "examples"
    out = tmp_path / "out"
    assert main(["suite", "run", str(ex / "softsign"), str(ex / "gemm_bf16"),
                 "--kernels", str(ex), "--out", str(out), "--no-progress"]) == 0
    by = {r["name"]: r for r in load(out)}
    assert by["softsign"]["verdict"] == "pass" and by["softsign"]["speedup_eager"] > 2.0
    assert by["softsign"]["roofline_of"] == "HBM peak" and by["softsign"]["roofline"] > 0.8
    assert by["gemm_bf16"]["verdict"] == "pass" and by["gemm_bf16"]["roofline_of"] == "bf16 peak"
    assert by["gemm_bf16"]["gpu"] is not None
    md = (out / "report.md").read_text()
    assert "| softsign | ✓ |" in md and (out / "report.html").stat().st_size > 10_000
