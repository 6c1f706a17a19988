"""The per-line profile on real data: Nsight Compute reports captured on the H200 (fixtures/*.ncu-rep, read with the
real `ncu_report`), folded through the line table of the same kernel built here (real nvcc, real nvdisasm).

The reports were made from examples/ at capture time (/work/notes/captures/cap); a test whose example has changed
since (its text differs from the source the report imported) skips and says so, rather than fold onto other code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.profiler.line_table import find_tool, parse_nvdisasm, read_line_table
from cutegen.profiler.lines import Folder, digest, fold, read_report, system_folders
from cutegen.records import LineProfile, RunRecord

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
KERNELS = {"softsign": "examples/softsign/softsign.cu", "softmax": "examples/softmax/softmax.cu",
           "gemm_fp32": "examples/kernelbench/level1/1_Square_matrix_multiplication_.cu"}

pytest.importorskip("ncu_report", reason="the lens tests read .ncu-rep files with ncu_report (pip install ncu-report)")


def _tools():
    nvdisasm, cuobjdump = find_tool("nvdisasm", []), find_tool("cuobjdump", [])
    if nvdisasm is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm)")
    return nvdisasm, cuobjdump


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    return {name: read_report(FIXTURES / f"{name}_lines.ncu-rep", None) for name in KERNELS}


def _captured_source_matches(name: str) -> None:
    import ncu_report

    action = ncu_report.load_report(str(FIXTURES / f"{name}_lines.ncu-rep")).range_by_idx(0).action_by_idx(0)
    for file, text in action.source_files().items():  # the kernel's copy in the build cache, and its user headers
        rel = file[file.index("examples/"):] if "/examples/" in file else KERNELS[name] if file.endswith(
            Path(KERNELS[name]).name) else None
        if rel and text and _code_lines((ROOT / rel).read_text()) != _code_lines(text):
            pytest.skip(f"{rel} changed since the H200 capture: re-capture its report (docs/guide/profiler.md)")


def _code_lines(text: str) -> list[str]:
    """The text line for line without its `//` comments: a comment edit that keeps every line where it was
    changes neither the SASS nor the line table the capture was folded with."""
    return [line.split("//", 1)[0].rstrip() for line in text.splitlines()]


def _profile(name: str, reports, builder, tables=None) -> LineProfile:
    _captured_source_matches(name)
    nvdisasm, cuobjdump = _tools()
    kernel = ROOT / KERNELS[name]
    build = builder.run(Tier.BUILD, kernel)
    assert build.ok, build.raw_log[-2000:]
    if tables is None:
        tables = read_line_table(Path(build.artifact), nvdisasm, cuobjdump)
    copy = str(Path(build.artifact).parent / kernel.name)
    folder = Folder({copy: str(kernel)}, system_folders(builder.toolchain))
    return LineProfile.from_json(fold(reports[name], tables, folder))


def test_the_reader_gives_per_pc_samples_and_the_kernel_base(reports):
    (kernel,) = reports["softsign"]["kernels"]
    assert kernel["mangled"] == "_ZN13softsign_impl18elementwise_kernelILb1EEEvPKfPfl"
    stalls = {n for n in kernel["metrics"] if n.startswith("smsp__pcsamp_warps_issue_stalled_")}
    assert "smsp__pcsamp_warps_issue_stalled_long_scoreboard" in stalls and "inst_executed" in kernel["metrics"]
    assert kernel["base"] == min(int(pc) for pc in kernel["metrics"]["inst_executed"])  # offset 0 runs first
    assert all(pc in kernel["sass"] for pc in kernel["metrics"]["inst_executed"])


def test_softsign_hot_lines_are_the_users_and_match_nsight(reports, builder):
    profile = _profile("softsign", reports, builder)
    assert profile.attribution == "inlined-at" and profile.user_share >= 0.9, profile.note
    top = {h.line: h for h in profile.hottest(3)}
    # Nsight's own CPIStall markers on the H200: 37.4 % of all stalls on the math (long_scoreboard: the loads'
    # first use) and 16.6 % on the stores (drain); header code (cute/algorithm/copy.hpp) lands on the copy() calls.
    assert set(top) == {33, 59, 56}
    assert top[33].top_stalls(1)[0][0] == "long_scoreboard" and top[59].top_stalls(1)[0][0] == "drain"
    assert "copy(tiled_copy, frag, tYgY)" in top[59].text
    assert any("of type drain" in m for m in top[59].markers)
    assert top[59].sass and any("STG" in s for s in top[59].sass)
    # without the inline chains much of this would sit in headers
    assert profile.innermost_samples < profile.user_samples


@pytest.mark.parametrize("name", ["softmax", "gemm_fp32"])
def test_softmax_and_gemm_land_on_user_lines(name, reports, builder):
    profile = _profile(name, reports, builder)
    assert profile.attribution == "inlined-at", profile.note
    assert profile.user_share >= 0.9
    hottest = profile.lines[0]  # the GEMM's device code is in a user header next to it (common/gemm_3xtf32.cuh)
    assert hottest.file.startswith(str((ROOT / KERNELS[name]).parent)) and hottest.text and hottest.top_stalls()
    assert sum(h.share for h in profile.lines) == pytest.approx(profile.user_share)


def test_without_a_line_table_header_samples_stay_unplaced(reports, builder):
    inlined = _profile("softsign", reports, builder)
    innermost = _profile("softsign", reports, builder, tables={})
    assert innermost.attribution == "innermost" and "no line table" in innermost.note
    assert innermost.user_share < inlined.user_share
    assert innermost.user_samples == inlined.innermost_samples


def test_a_line_table_from_another_build_is_not_trusted(reports, builder):
    """A table whose SASS does not match the report (another build of the kernel) must not place samples."""
    _captured_source_matches("softsign")
    table = parse_nvdisasm("\n".join(["\t.section\t.text._ZN13softsign_impl18elementwise_kernelILb1EEEvPKfPfl,\"ax\"",
                                      ".text._ZN13softsign_impl18elementwise_kernelILb1EEEvPKfPfl:",
                                      '\t//## File "/elsewhere/softsign.cu", line 1']
                                     + [f"        /*{i * 16:04x}*/                   NOP ;" for i in range(600)]))
    profile = LineProfile.from_json(fold(reports["softsign"], table, Folder({}, system_folders(builder.toolchain))))
    assert profile.attribution == "innermost" and "matched" in profile.note
    assert all(h.line != 1 for h in profile.lines)


def test_nvdisasm_chains_walk_out_of_cute_headers(builder):
    nvdisasm, cuobjdump = _tools()
    kernel = ROOT / KERNELS["softsign"]
    build = builder.run(Tier.BUILD, kernel)
    tables = read_line_table(Path(build.artifact), nvdisasm, cuobjdump)
    vectorized = tables["_ZN13softsign_impl18elementwise_kernelILb1EEEvPKfPfl"]
    in_headers = [c for c in vectorized.chains.values() if "cute/" in c[0][0]]
    assert in_headers, "CuTe's copy is inlined: some instructions' innermost place is a CuTe header"
    for chain in in_headers:
        assert chain[-1][0].endswith("softsign.cu")  # every chain ends at the kernel's own line


def test_damaged_and_missing_reader_are_messages(tmp_path):
    bad = tmp_path / "damaged.ncu-rep"
    bad.write_bytes(b"not a report" * 100)
    out = read_report(bad, None)
    assert "error" in out and "damaged.ncu-rep" in out["error"]
    # A Python without site-packages has no ncu_report: the reader says what is missing instead of failing.
    env = {"PYTHONPATH": str(ROOT / "server"), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-S", "-m", "cutegen.profiler.report_reader", str(FIXTURES / "softsign_lines.ncu-rep")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert "pip install ncu-report" in json.loads(p.stdout)["error"]


def test_a_changed_file_makes_the_profile_stale(reports, builder):
    profile = _profile("softsign", reports, builder)
    path = ROOT / KERNELS["softsign"]
    text = path.read_text()
    assert not profile.stale(str(path), text)
    assert profile.stale(str(path), text.replace("kVecPerThread = 4", "kVecPerThread = 8"))
    assert profile.stale("/another/file.cu", text)


def test_the_line_profile_round_trips_through_a_run_record(reports, builder, tmp_path):
    from cutegen import records

    profile = _profile("softsign", reports, builder)
    payload = {"verdict": "profiled", "message": "m", "lines": json.loads(json.dumps(profile.__dict__, default=lambda o: o.__dict__))}
    path = records.write(tmp_path, "profile", str(ROOT / KERNELS["softsign"]), payload)
    back = records.read(path)
    assert isinstance(back, RunRecord) and back.lines is not None
    assert back.lines.lines[0].line == profile.lines[0].line and back.lines.user_share == profile.user_share
    assert "hottest line 33" in back.summary() and "% of samples on user lines" in back.summary()
    assert digest(Path(ROOT / KERNELS["softsign"]).read_text()) == back.lines.digests[str(ROOT / KERNELS["softsign"])]


def test_a_kernel_without_its_mangled_name_finds_its_table_by_its_sass(reports, builder):
    """An ncu_report that cannot give the mangled name: the table whose SASS agrees is used, not the other kernel's."""
    import copy

    unnamed = copy.deepcopy(reports["softsign"])
    unnamed["kernels"][0]["mangled"] = ""
    profile = _profile("softsign", {**reports, "softsign": unnamed}, builder)
    assert profile.attribution == "inlined-at" and profile.user_share >= 0.9
    assert [h.line for h in profile.hottest(3)] == [33, 59, 56]
