"""Problem discovery and kernel matching, run records → rows (real H200 records), the results file."""

from __future__ import annotations

import shutil

from cutegen import records
from cutegen.suite import rows
from cutegen.suite.problems import discover, match_kernels
from cutegen.suite.store import ResultStore, load
from tests.support.suite_cases import HOST_KERNELS, LEVEL1, RECORDS, ROOT


def record(name: str):
    return records.read(RECORDS / f"{name}.json")  # schema 1, as the H200 wrote them: read typed


def test_a_kernelbench_level_folder_is_found_in_benchmark_order(tmp_path):
    # KernelBench numbers its problems: 2 comes before 10, and files that are not problems are left out
    shutil.copytree(LEVEL1, tmp_path / "level1")
    (tmp_path / "level1" / "2_Copy.py").write_text((LEVEL1 / "19_ReLU.py").read_text())
    (tmp_path / "level1" / "helpers.py").write_text("def get_inputs():\n    return []\n")
    (tmp_path / "level1" / "__pycache__").mkdir()
    (tmp_path / "level1" / "__pycache__" / "9_X.py").write_text((LEVEL1 / "19_ReLU.py").read_text())
    names = [e.name for e in discover([tmp_path / "level1"])]
    assert names == ["2_Copy", "19_ReLU", "21_Sigmoid", "22_Tanh", "30_Softsign", "31_ELU", "32_HardTanh"]


def test_a_whole_checkout_names_problems_of_equal_stems_by_their_level(tmp_path):
    for level in ("level1", "level2"):
        (tmp_path / level).mkdir()
        (tmp_path / level / "1_Op.py").write_text((LEVEL1 / "19_ReLU.py").read_text())
    (tmp_path / "level2" / "7_Other.py").write_text((LEVEL1 / "19_ReLU.py").read_text())
    assert [e.name for e in discover([tmp_path])] == ["7_Other", "level1/1_Op", "level2/1_Op"]


def test_kernels_are_matched_by_name_cu_or_modelnew():
    entries = {e.name: e for e in match_kernels(discover([ROOT / "examples"]), ROOT / "examples")}
    assert entries["softsign"].kernel == (ROOT / "examples/softsign/softsign.cu").resolve()
    # the ModelNew convention: problem NAME_ref.py, kernel NAME.py with class ModelNew; the ModelNew file is no problem
    modelnew = (ROOT / "examples/softsign_modelnew/softsign_modelnew.py").resolve()
    assert entries["softsign_modelnew_ref"].kernel == modelnew
    assert "softsign_modelnew" not in entries
    level = {e.name: e.kernel for e in match_kernels(discover([LEVEL1]), HOST_KERNELS)}
    assert level["31_ELU"] is None and level["30_Softsign"].name == "30_Softsign.cu"


def test_a_profile_reply_from_a_gpu_worker_reads_back_as_its_record():
    """The worker's reply crosses a pipe as JSON (suite/gpus.py): the row reads the record it carries."""
    import json

    from tests.suite import host_judge

    sent = record("softsign-profile")
    profiled = rows.profile_record(json.loads(json.dumps({"profile_record": sent.to_message()})))
    assert profiled.path == sent.path and profiled.profile.evidence == sent.profile.evidence
    assert rows.profile_fields(profiled) == rows.profile_fields(sent)
    not_run = rows.profile_record(host_judge.handle({"profile": {"kernel": "/ws/k.cu"}}))
    assert rows.profile_fields(not_run)["profile_note"] == "not-run: no profiler on the CPU"
    assert rows.profile_record({"verdict": "crashed"}) is None  # the worker died under the job


def test_bench_record_row_has_the_papers_figures():
    row = rows.from_record("softsign", record("softsign-bench"), record("softsign-profile"))
    assert row["verdict"] == "pass" and row["correct"] is True and row["compiled"] is True
    assert round(row["speedup_eager"], 2) == 3.32 and round(row["speedup_compile"], 2) == 1.04
    assert round(row["roofline"], 3) == 0.947 and row["roofline_of"] == "HBM peak"
    assert row["bottleneck"] == "memory-bound (97% of peak); long-scoreboard-stalls"
    gemm = rows.from_record("gemm_bf16", record("gemm_bf16-bench"))
    # schema 1 did not name the dtype whose peak the share is of
    assert gemm["roofline_of"] == "compute peak" and round(gemm["roofline"], 2) == 0.59
    assert round(gemm["speedup_eager"], 2) == 0.58 and gemm["bottleneck"] is None
    assert gemm["gpu_name"] == "NVIDIA H200"


def test_failed_records_are_incorrect_with_their_reason():
    tail = rows.from_record("tail_bug", record("tail_bug-test"))
    assert tail["correct"] is False and tail["mismatch"] == "tail" and "last 296 elements" in tail["message"]
    zero = rows.from_record("zero_output", record("zero_output-test"))
    assert zero["verdict"] == "constant-output" and zero["correct"] is False and zero["speedup_eager"] is None
    built = rows.placeholder("x", "x.py", "not-run", "built, not run")
    assert built["correct"] is None  # unknown, not wrong


def test_a_torn_last_line_is_ignored_and_the_next_append_is_whole(tmp_path):
    store = ResultStore(tmp_path)
    store.append({"name": "a", "verdict": "pass"})
    with open(store.path, "a") as f:
        f.write('{"name": "b", "verd')  # a run killed mid-write
    assert [r["name"] for r in load(tmp_path)] == ["a"]
    store.append({"name": "b", "verdict": "mismatch"})
    assert [r["name"] for r in load(tmp_path)] == ["a", "b"]
    assert store.done() == {"a", "b"}
