"""What `cutegen profile --lines` and `cutegen sanitize` print, for records made from the H200 captures (the same
functions print after a GPU run; tests/profiler/test_lens_gpu.py runs the commands there)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from cutegen.compile import Tier
from cutegen.cli.lens import lines_table, sanitizer_errors
from cutegen.profiler.line_table import find_tool, read_line_table
from cutegen.profiler.lines import Folder, fold, read_report, system_folders
from cutegen.profiler.sanitizer import condense, diagnostics, parse
from cutegen.records import RunRecord

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"


def test_the_lines_table_shows_the_hot_lines_and_the_coverage(builder, capsys):
    pytest.importorskip("ncu_report")
    nvdisasm = find_tool("nvdisasm", [])
    if nvdisasm is None:
        pytest.skip("no nvdisasm")
    build = builder.run(Tier.BUILD, SOFTSIGN)
    tables = read_line_table(Path(build.artifact), nvdisasm, find_tool("cuobjdump", []))
    lines = fold(read_report(FIXTURES / "softsign_lines.ncu-rep", None), tables,
                 Folder({str(Path(build.artifact).parent / SOFTSIGN.name): str(SOFTSIGN)}, system_folders(builder.toolchain)))
    record = RunRecord.from_payload("profile", str(SOFTSIGN), {"verdict": "profiled", "kernel": str(SOFTSIGN), "lines": lines})
    lines_table(record, 5, Console(stderr=True, width=200))
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if l.startswith("  softsign.cu:")]
    assert out.startswith("hot lines of elementwise_kernel:") and len(rows) == 5
    assert rows[0].split() == ["softsign.cu:33", "69.1", "%", "270,701", "samples", "long_scoreboard", "80", "%,",
                               "wait", "8", "%,", "branch_resolving", "3", "%"]
    assert rows[1].startswith("  softsign.cu:59     21.3 %") and "drain 77 %" in rows[1]
    assert "      copy(tiled_copy, frag, tYgY);            // ... then all stores" in out
    assert "      Nsight Compute: This line is responsible for 16.6% of all warp stalls" in out
    assert "100.0 % of 392,028 samples on user lines (inlined CuTe code charged to the user line that called it)" in out


def test_without_a_line_profile_the_table_says_why(capsys):
    err = Console(stderr=True, width=200)
    record = RunRecord.from_payload("profile", "k.cu", {"verdict": "profiled", "lines_problem": "nvdisasm was not found"})
    lines_table(record, 5, err)
    assert "no per-line profile: nvdisasm was not found" in capsys.readouterr().err


def test_sanitizer_errors_print_like_compile_errors(capsys, tmp_path, monkeypatch):
    kernel = tmp_path / "smem_race.cu"
    kernel.write_text((FIXTURES / "smem_race.cu").read_text())
    reports, errors = parse((FIXTURES / "sanitize_smem_race_racecheck.txt").read_text(), "racecheck")
    findings, unplaced = condense(reports, Folder({"/c/smem_race.cu": str(kernel)}, ("/usr/",)), {})
    payload = {"verdict": "sanitizer-errors", "message": "m", "kernel": str(kernel), "diagnostics": diagnostics(findings),
               "sanitizer": {"findings": findings, "tools": {"racecheck": errors}, "unplaced": unplaced}, "record": "r.json"}
    monkeypatch.chdir(tmp_path)
    record = RunRecord.from_payload("sanitize", str(kernel), payload)
    record.path = payload["record"]
    sanitizer_errors(record, Console(stderr=True, width=200))
    out, err = capsys.readouterr()
    first = out.splitlines()[0]
    assert first == "smem_race.cu:8:1: error: racecheck: (Warp Level Programming) Potential RAW hazard detected (20 reports)"
    assert "    write by thread (225,0,0) in block (107,0,0)" in out
    assert "    smem_race.cu:7: the write access it races with" in out
    assert "sanitizer-errors · 8193 errors (racecheck 8193) at line 8" in err
