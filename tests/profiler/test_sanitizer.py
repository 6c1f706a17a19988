"""compute-sanitizer's output condensed to findings at user lines: on its real output from the H200
(fixtures/sanitize_*.txt), on hostile and broken output, and `cutegen sanitize` where there is no sanitizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.profiler.line_table import find_tool, read_line_table
from cutegen.profiler.lines import Folder
from cutegen.profiler.sanitizer import condense, diagnostics, parse, suggestion
from cutegen.records import SanitizerReport

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
CASES = ROOT / "tests" / "kernels" / "sanitizer"
RACE = "/work/user/smem_race.cu"


def _folder(user: str = RACE) -> Folder:
    return Folder({f"/cache/ab/{Path(user).name}": user}, ("/usr/",))


def test_racecheck_hazards_become_one_finding_at_the_read():
    reports, errors = parse((FIXTURES / "sanitize_smem_race_racecheck.txt").read_text(), "racecheck")
    assert errors == 8193 and len(reports) == 20  # the summary's errors; the 20 hazards it printed
    findings, unplaced = condense(reports, _folder(), {})
    assert unplaced == []
    (f,) = findings  # 20 printed hazards, one line pair: one finding
    assert (f["file"], f["line"], f["count"]) == (RACE, 8, 20)  # the read of the neighbour's slot
    assert f["message"] == "(Warp Level Programming) Potential RAW hazard detected"
    assert f["threads"][0] == "write by thread (225,0,0) in block (107,0,0)"
    assert f["addresses"][:2] == ["0x784", "0x785"]
    assert any(r["line"] == 7 and "write access" in r["message"] for r in f["frames"])  # the racing write
    (d,) = diagnostics(findings)
    assert d["code"] == "sanitizer-racecheck" and d["line"] == 8 and d["severity"] == "error"
    assert "(20 reports)" in d["message"] and "__syncthreads" in d["explanation"]
    assert any("thread (225,0,0)" in r["message"] for r in d["related"])


def test_a_clean_run_has_no_findings():
    reports, errors = parse((FIXTURES / "sanitize_oob_store_memcheck.txt").read_text(), "memcheck")
    assert (reports, errors) == ([], 0)
    assert SanitizerReport(tools={"memcheck": 0, "racecheck": 0}).summary() == "no errors (memcheck, racecheck)"


MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at copy_kernel(const float *, float *, long)+0x{off:x} in {file}:{line}
=========     by thread (160,0,0) in block (15,0,0)
=========     Address 0x7f3a00003e80 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a00000000 of size 16000 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cutegen_forward [0x1708] in oob_store.so
=========
========= Invalid __global__ write of size 4 bytes
=========     at copy_kernel(const float *, float *, long)+0x{off:x} in {file}:{line}
=========     by thread (161,0,0) in block (15,0,0)
=========     Address 0x7f3a00003e84 is out of bounds
=========
========= ERROR SUMMARY: 2 errors
"""


@pytest.mark.parametrize("wording", ["Address", "Access to"])  # CUDA 12's words; CUDA 13's (the H200's run)
def test_memcheck_reports_of_many_threads_fold_with_their_evidence(wording):
    out = MEMCHECK.format(off=0x90, file="oob_store.cu", line=12).replace("Address 0x", f"{wording} 0x")
    reports, errors = parse(out, "memcheck")
    findings, _ = condense(reports, _folder("/work/user/oob_store.cu"), {})
    (f,) = findings
    assert (f["line"], f["count"], errors) == (12, 2, 2)
    assert f["threads"] == ["thread (160,0,0) in block (15,0,0)", "thread (161,0,0) in block (15,0,0)"]
    assert f["addresses"] == ["0x7f3a00003e80", "0x7f3a00003e84"]
    assert any("after the nearest allocation" in d for d in f["details"])


def test_a_header_place_is_walked_out_to_the_calling_user_line(builder):
    """The sanitizer names the innermost place (a CuTe header) for inlined code; the library's line table takes
    it out to the user line. Real table: the softsign example built here."""
    nvdisasm = find_tool("nvdisasm", [])
    if nvdisasm is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm)")
    kernel = ROOT / "examples" / "softsign" / "softsign.cu"
    build = builder.run(Tier.BUILD, kernel)
    tables = read_line_table(Path(build.artifact), nvdisasm, find_tool("cuobjdump", []))
    table = tables["_ZN13softsign_impl18elementwise_kernelILb1EEEvPKfPfl"]
    offset, chain = next((o, c) for o, c in sorted(table.chains.items()) if "/cute/" in c[0][0])
    header, line = chain[0]
    out = MEMCHECK.format(off=offset, file=Path(header).name, line=line)
    folder = Folder({str(Path(build.artifact).parent / kernel.name): str(kernel)}, ("/usr/",))
    findings, unplaced = condense(parse(out, "memcheck")[0], folder, tables)
    (f,) = findings
    assert f["file"] == str(kernel) and f["line"] == next(l for p, l in chain if p.endswith("softsign.cu"))
    assert "/cute/" in f["frames"][0]["file"]
    # Without the table the same report has no user line: said, not guessed.
    assert condense(parse(out, "memcheck")[0], folder, {}) == ([], ["memcheck: Invalid __global__ write of size 4 bytes"])


@pytest.mark.parametrize("garbage", ["", "segfault\n\x00\x01binary", "========= \n=========\n" * 50,
                                     "========= Invalid __global__ write\n=========     at k+0xZZ in :x\n"])
def test_broken_output_never_raises(garbage):
    reports, errors = parse(garbage, "memcheck")
    findings, unplaced = condense(reports, _folder(), {})
    assert findings == [] and errors == 0


def test_the_harness_verdicts_that_suggest_the_sanitizer():
    assert "cutegen sanitize" in suggestion("cuda-error", "an illegal memory access was encountered")
    assert suggestion("crashed") and suggestion("launch-error")
    assert suggestion("mismatch", "tail") is None and suggestion("pass") is None


def test_sanitize_without_compute_sanitizer_says_what_is_missing(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "cutegen", "sanitize", str(CASES / "oob_store.cu"), "--json",
                        "--state-dir", str(tmp_path / ".cutegen")], capture_output=True, text=True, env=env, timeout=300)
    if "compute-sanitizer" in (subprocess.run(["which", "compute-sanitizer"], capture_output=True, text=True).stdout):
        pytest.skip("this machine has compute-sanitizer")
    record = json.loads(p.stdout)
    assert p.returncode == 2 and record["verdict"] == "sanitizer-missing"
    assert "compute-sanitizer was not found" in record["message"] and "Traceback" not in p.stderr


def test_every_case_marks_its_bug_line():
    """The four broken kernels the GPU benchmark places (bench/profile_lines.py): each names its tool."""
    tools = {}
    for f in sorted(CASES.glob("*.cu")):
        marks = [(i, l.split("BUG:")[1].strip()) for i, l in enumerate(f.read_text().splitlines(), 1) if "// BUG:" in l]
        assert len(marks) == 1, f.name
        tools[f.stem] = marks[0][1]
    assert sorted(tools.values()) == ["initcheck", "memcheck", "racecheck", "synccheck"]
