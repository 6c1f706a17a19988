"""The agent's view of the per-line profile, without a GPU: the Optimize prompt's hot-line text from a line profile
of the H200 capture (folded here through the real line table), the profile_lines tool's spec, and which lines an
edit touches (the hot-line preference of the loop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.agent import prompts
from cutegen.agent.agent import _missed_hot_lines, changed_lines, hot_lines
from cutegen.agent.tools import SPECS
from cutegen.compile import Tier
from cutegen.profiler.line_table import find_tool, read_line_table
from cutegen.profiler.lines import Folder, fold, read_report, system_folders
from cutegen.records import LineProfile, RunRecord

ROOT = Path(__file__).resolve().parents[2]
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"


@pytest.fixture(scope="module")
def profile_record(builder) -> RunRecord:
    pytest.importorskip("ncu_report")
    nvdisasm = find_tool("nvdisasm", [])
    if nvdisasm is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm)")
    build = builder.run(Tier.BUILD, SOFTSIGN)
    tables = read_line_table(Path(build.artifact), nvdisasm, find_tool("cuobjdump", []))
    data = read_report(ROOT / "tests" / "profiler" / "fixtures" / "softsign_lines.ncu-rep", None)
    lines = fold(data, tables, Folder({str(Path(build.artifact).parent / SOFTSIGN.name): str(SOFTSIGN)},
                                      system_folders(builder.toolchain)))
    return _profiled({"classification": {"bound": "memory", "summary": "memory-bound at 97% of achievable DRAM bandwidth"},
                      "signals": [], "lines": lines})


def _profiled(payload: dict) -> RunRecord:
    """The record profile_kernel returns for this payload (its Recorder reads the payload the same way)."""
    return RunRecord.from_payload("profile", str(SOFTSIGN), {"verdict": "profiled", "message": "", **payload})


def test_the_optimize_prompt_quotes_the_hot_lines_with_their_advice(profile_record):
    text = SOFTSIGN.read_text()
    failure = prompts.failure_text("softsign.cu", text, profile=profile_record)
    messages = prompts.optimize("softsign.cu", text, workload="elementwise", baseline="3.1 ms", profile=failure,
                                menu=["- 128-bit vectorized loads"], previous=[])
    user = messages[-1]["content"]
    assert "Hot lines (share of the kernel's warp samples" in user and "100% of all samples" in user
    assert "- line 33 (69.1%): `__device__ __forceinline__ float operator()(float x) const" in user
    assert "- line 59 (21.3%): `copy(tiled_copy, frag, tYgY);" in user and "drain" in user
    assert "advice for long_scoreboard: Issue the loads well before their first use" in user
    assert user.index("line 33 (") < user.index("line 59 (") < user.index("line 56 (")  # hottest first


def test_no_line_profile_leaves_the_prompt_as_it_was():
    record = _profiled({"classification": {"bound": "memory", "summary": "s"}, "signals": []})
    assert "Hot lines" not in prompts.failure_text("k.cu", "x\n", profile=record)
    assert "no samples landed" in prompts.hot_lines_text("k.cu", LineProfile(lines=[], total_samples=0))


def test_tool_calling_mode_offers_profile_lines():
    names = [s["function"]["name"] for s in SPECS]
    assert "profile_lines" in names and names.index("profile_lines") == names.index("profile") + 1
    assert "profile_lines (the hottest source lines" in prompts.tools("k.cu", "x\n", "optimize", "ctx")[-1]["content"]


def test_which_hot_lines_an_edit_touches(profile_record):
    text = SOFTSIGN.read_text()
    hot = hot_lines(profile_record, "softsign.cu")
    assert {33, 59, 56} <= hot and len(hot) == 5
    edited = text.replace("copy(tiled_copy, frag, tYgY);", "copy(tiled_copy, frag, tYgY);  // stores")
    assert hot & changed_lines(text, edited) == {59}
    launcher_only = text.replace("if (num_inputs != 1", "if (num_inputs < 1")
    assert not hot & changed_lines(text, launcher_only)
    assert "changed none of the hot lines" in _missed_hot_lines(hot, [])
    assert _missed_hot_lines(hot, [59]) == "" and _missed_hot_lines(set(), []) == ""
    assert hot_lines(None, "softsign.cu") == set() and hot_lines(_profiled({"lines": None}), "softsign.cu") == set()
