"""bench/gemm_rungs.py's CPU half: it times every kernel of the Hopper GEMM ladder, and its flagship candidates
are the flagship with only the schedule line changed."""

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


def test_candidates_change_only_the_schedule(tmp_path):
    flagship = gemm_rungs.RUNGS["gemm_bf16"].read_text().splitlines()
    for name, path in gemm_rungs.write_candidates(tmp_path).items():
        text = path.read_text().splitlines()
        changed = [(a, b) for a, b in zip(flagship, text) if a != b]
        assert len(text) < len(flagship) and any(gemm_rungs.CANDIDATES[name] in b for _, b in changed), name
        include = next(b for _, b in changed if b.startswith("#include"))
        assert Path(include.split('"')[1]).is_file(), include
