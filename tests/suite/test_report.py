"""The report from real H200 rows: the paper's table, fast_p against both baselines, geometric means, rates,
plots embedded in one HTML file, and two runs side by side."""

from __future__ import annotations

import base64
import importlib.util
import re

import pytest

from cutegen import records
from cutegen.cli import main
from cutegen.suite import report, rows
from cutegen.suite.store import ResultStore
from tests.support.suite_cases import RECORDS


def h200_run(folder):
    rec = lambda n: records.read(RECORDS / f"{n}.json")  # noqa: E731
    store = ResultStore(folder)
    softsign = rows.from_record("softsign", rec("softsign-bench"), rec("softsign-profile"))
    store.append({**softsign, "rounds_to_correct": 1})
    store.append(rows.from_record("gemm_bf16", rec("gemm_bf16-bench")))
    store.append(rows.from_record("tail_bug", rec("tail_bug-test")))
    store.append(rows.from_record("zero_output", rec("zero_output-test")))
    store.append(rows.placeholder("broken", "broken.py", "build-failed", "the kernel does not build: error"))
    return folder


def test_fast_p_and_rates_follow_kernelbench(tmp_path):
    s = report.summary(report.open_run(h200_run(tmp_path / "a")))
    assert (s["problems"], s["correct"], s["compile_failures"]) == (5, 2, 1)
    eager, compiled = s["fast_p_speedup_eager"], s["fast_p_speedup_compile"]
    # softsign 3.32× eager / 1.04× compile; gemm 0.58× both: fast_0 = 2/5 correct, fast_1 only softsign
    assert eager == {0.0: 0.4, 1.0: 0.2, 1.5: 0.2, 2.0: 0.2}
    assert compiled == {0.0: 0.4, 1.0: 0.2, 1.5: 0.0, 2.0: 0.0}
    assert s["geomean_speedup_eager"] == pytest.approx((3.3225 * 0.5828) ** 0.5, rel=1e-3)


def test_markdown_and_self_contained_html(tmp_path, capsys):
    run = h200_run(tmp_path / "a")
    assert main(["suite", "report", str(run)]) == 0
    md = (run / "report.md").read_text()
    assert ("| softsign | ✓ | 3.32× | 1.04× | 95% HBM peak | memory-bound (97% of peak); long-scoreboard-stalls "
            "| 1 |") in md
    assert "| gemm_bf16 | ✓ | 0.58× | 0.58× | 59% compute peak |" in md
    assert "| tail_bug | ✗ |" in md
    assert "| eager | 40% | 20% | 20% | 20% | 1.39× |" in md
    assert "| torch.compile | 40% | 20% | 0% | 0% | 0.78× |" in md
    page = (run / "report.html").read_text()
    images = re.findall(r"src='data:image/png;base64,([^']+)'", page)
    if importlib.util.find_spec("matplotlib") is None:  # an optional extra: the tables stand without the plots
        assert not images and "![" not in md
    else:
        assert (run / "report-speedups.png").stat().st_size > 1000 and "![fast_p](report-fast_p.png)" in md
        assert len(images) == 2 and all(base64.b64decode(i)[:4] == b"\x89PNG" for i in images)
    assert "<td>softsign</td>" in page and "src='http" not in page  # nothing fetched from elsewhere
    assert "| softsign |" in capsys.readouterr().out


def test_two_runs_side_by_side(tmp_path):
    a = h200_run(tmp_path / "a")
    b = ResultStore(tmp_path / "b")
    rec = records.read(RECORDS / "softsign-bench.json")
    rec.baselines["eager"].median_ms = 1.5 * rec.timing.median_ms
    b.append(rows.from_record("softsign", rec))
    md, page = report.write([a, tmp_path / "b"])
    text = md.read_text()
    assert md.name == "compare-b.md" and "# CuTeGen suite: a vs b" in text
    assert "| softsign | ✓ | ✓ | 3.32× | 1.50× |" in text
    assert "| gemm_bf16 | ✓ |  | 0.58× |  |" in text  # not in run b: empty cells, not zeros
    assert text.count("| correct | 2/5 (40%) | 1/1 (100%) |") == 1


def test_report_of_a_folder_without_results_says_so(tmp_path, capsys):
    assert main(["suite", "report", str(tmp_path)]) == 2
    assert "holds no results.jsonl" in capsys.readouterr().err


def test_a_run_without_a_gpu_says_not_run_instead_of_zeros(tmp_path):
    store = ResultStore(tmp_path / "cpu")
    for name in ("19_ReLU", "21_Sigmoid", "22_Tanh"):
        store.append(rows.placeholder(name, f"{name}.py", "not-run", "no NVIDIA GPU on this machine: built, not run"))
    store.append(rows.placeholder("31_ELU", "31_ELU.py", "build-failed", "the kernel does not build"))
    md_path, page_path = report.write([tmp_path / "cpu"])
    md, page = md_path.read_text(), page_path.read_text()
    assert "| eager | not run | not run | not run | not run | – |" in md, md
    assert "| torch.compile | not run | not run | not run | not run | – |" in md
    assert "| correct | not run (3 of 4 problems: no GPU) |" in md
    assert "0%" not in md.split("## Problems")[0].replace("compile failures | 1/4 (25%)", "")
    assert "fast_p.png" not in md and page.count("data:image/png") == 0  # no empty plot
