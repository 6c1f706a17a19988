"""bench/gemm_rungs.py's CPU half: it times every kernel of the Hopper GEMM ladder, and its flagship candidates
are one schedule each on the shared launcher."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import gemm_rungs  # noqa: E402


def test_every_kernel_of_the_shared_launcher_is_a_rung():
    users = {p.stem for p in ROOT.glob("examples/**/*.cu") if "gemm_sm90_common.cuh" in p.read_text()}
    assert users and users <= set(gemm_rungs.RUNGS), users - set(gemm_rungs.RUNGS)
    assert all(p.is_file() for p in gemm_rungs.RUNGS.values())


def test_a_candidate_is_one_schedule_on_the_shared_launcher(tmp_path):
    """A candidate times one kernel at every shape (the flagship picks among four by shape): its own schedule, or
    the flagship's large one, and its launch options."""
    large = gemm_rungs.flagship_schedule()
    assert large.startswith("Shape<_128, _256, _64>"), large
    for name, path in gemm_rungs.write_candidates(tmp_path).items():
        text = " ".join(path.read_text().split())
        arguments, options = gemm_rungs.CANDIDATES[name]
        assert f"Sm90Gemm<{' '.join((arguments or large).split())}>::Gemm;" in text, name
        assert f"LaunchOptions kOptions{{{options or ''}}};" in text, name
        assert text.count("Sm90Gemm<") == 1 and "launch<candidate_impl::Gemm>" in text, name
        include = next(line for line in path.read_text().splitlines() if line.startswith("#include"))
        assert Path(include.split('"')[1]).is_file(), include


def test_pooled_ratio_spans_every_block_of_every_process():
    """bench/gemm_timing_methods.py --pool: a kernel that beats cuBLAS in one process and loses in another has an
    interval that holds 1.0, though each process alone would say otherwise."""
    import gemm_timing_methods as methods

    def run(kernel_ms: list[float]) -> dict:
        blocks = []
        for ms in kernel_ms:
            block = {}
            for method in methods.METHODS:
                block[f"cuBLAS|{method}"], block[f"gemm_bf16|{method}"] = 0.180, ms
                block[f"cuBLAS_out|{method}"] = 0.178  # the preallocated-output call, faster here
            blocks.append(block)
        return {"blocks": blocks}

    pooled = methods.pool([run([0.176, 0.177, 0.178]), run([0.181, 0.182, 0.183])])
    flagship = pooled["gemm_bf16|graph-flush"]
    assert flagship["blocks"] == 6
    assert flagship["interval"][0] < 1.0 < flagship["interval"][1]
    assert flagship["run_medians"][0] > 1.0 > flagship["run_medians"][1]
    assert pooled["cuBLAS|event"]["x_cublas"] == 1.0
    # against the faster cuBLAS call the first process's 0.176 ms is 0.178 / 0.176 = 1.011x, not 1.023x
    assert flagship["best_interval"][1] == 0.178 / 0.176
