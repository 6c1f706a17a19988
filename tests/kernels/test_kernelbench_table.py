"""The Level-1 table from a suite run: each ratio with its interval, "≈ 1" where the interval holds 1.0 (no number
claimed), and the errors the verdict was judged on against the fp64 truth. Rows are built from run records the
way the suite builds them (suite/rows.py), so the table reads what a real run stores."""

from __future__ import annotations

import importlib.util
import json

from cutegen.records import RunRecord, Timing
from cutegen.suite import rows
from tests.support.paths import ROOT

spec = importlib.util.spec_from_file_location("kernelbench_table", ROOT / "bench" / "kernelbench_table.py")
table_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table_module)


def timing(blocks):
    return Timing(sorted(blocks)[len(blocks) // 2], min(blocks), max(blocks), 0.05, len(blocks), block_ms=blocks)


def row(name: str, kernel_ms: list[float], eager_ms: list[float], accuracy: dict) -> dict:
    record = RunRecord.from_payload("bench", f"{name}.cu", {
        "verdict": "pass", "message": "correct", "kernel": str(ROOT / "examples/kernelbench/level1" / f"{name}.cu"),
        "problem": str(ROOT / "examples/kernelbench/level1" / f"{name}.py"),
        "timing": timing(kernel_ms).to_json(), "eager": timing(eager_ms).to_json(),
        "torch_compile": timing(eager_ms).to_json(), "accuracy": accuracy})
    return rows.from_record(name, record)


def test_the_table_shows_intervals_within_noise_and_fp64_errors(tmp_path):
    fast = [0.040, 0.041, 0.039, 0.040, 0.040, 0.042, 0.040, 0.039, 0.041, 0.040]
    noise = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 1.0, 0.99, 1.01, 1.0]
    lines = [
        row("12_Matmul_with_diagonal_matrices_", fast, [1.6 * f for f in fast],
            {"truth": "fp64", "mode": "fp64", "atol": 1e-4, "rtol": 1e-4, "kernel_error": 0.03, "reference_error": 0.5}),
        row("19_ReLU", [3.1] * 10, [3.1 * n for n in noise],
            {"truth": "fp64", "mode": "fp64", "atol": 1e-4, "rtol": 1e-4, "kernel_error": 0.0, "reference_error": 0.0}),
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    text = table_module.table([tmp_path], ROOT / "examples" / "kernelbench" / "level1")
    twelve = next(line for line in text.splitlines() if line.startswith("| 12 "))
    relu = next(line for line in text.splitlines() if line.startswith("| 19 "))
    assert "1.60× [1.60–1.60]" in twelve and "0.03 / 0.5" in twelve
    assert "≈ 1 (0.98–1.02)" in relu and "0 / 0" in relu
    assert "error vs fp64" in text.splitlines()[0]


def _run(folder, speedup: float):
    fast = [0.040] * 6
    accuracy = {"truth": "fp64", "mode": "fp64", "atol": 1e-4, "rtol": 1e-4, "kernel_error": 0.0, "reference_error": 0.0}
    folder.mkdir()
    line = row("12_Matmul_with_diagonal_matrices_", fast, [speedup * f for f in fast], accuracy)
    (folder / "results.jsonl").write_text(json.dumps(line) + "\n")
    return folder


def test_runs_in_separate_processes_give_an_interval_for_another_run(tmp_path):
    """Each run alone is exact (constant blocks), yet the three disagree: the merged interval must hold their spread
    and predict a fourth run near them, not one far off."""
    runs = [_run(tmp_path / f"run{i}", s) for i, s in enumerate((1.58, 1.60, 1.62))]
    (merged,) = table_module.merged(runs)
    assert merged["runs"] == 3 and merged["speedup_eager"] == 1.60
    assert merged["speedup_eager_low"] < 1.58 and merged["speedup_eager_high"] > 1.62
    near, far = _run(tmp_path / "near", 1.63), _run(tmp_path / "far", 1.90)
    assert table_module.check([merged], near)[:2] == (2, 2)
    inside, compared, outside = table_module.check([merged], far)
    assert (inside, compared) == (0, 2) and "outside" in outside[0]
    assert "1.60× [" in table_module.table(runs, ROOT / "examples" / "kernelbench" / "level1")
