"""`cutegen versions FILE` and `cutegen restore-best FILE` choose "best" as the tree does (agent/tree.py
`VersionTree.best`): by the objective the tree was searched with, never an untimed version; without a best version
the listing says why. The trees are grown with the tree's own API from the judge's Verifications."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.tree_landscapes import BEST, CHANGES, START, searched, untimed

ROOT = Path(__file__).resolve().parents[2]


def _cutegen(ws: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "CUTEGEN_LLM_BASE_URL": "", "CUTEGEN_LLM_MODEL": ""}
    return subprocess.run([sys.executable, "-m", "cutegen", *args, "--state-dir", str(ws / ".cutegen")], cwd=ws,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(START)
    return path


def _best_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line[1:5] == "best"]


def test_no_untimed_version_is_marked_best_and_the_listing_says_why(tmp_path, kernel):
    untimed(tmp_path / ".cutegen", kernel)
    listed = _cutegen(tmp_path, "versions", "k.cu")
    assert listed.returncode == 0, listed.stderr
    assert _best_lines(listed.stdout) == []
    assert listed.stdout.splitlines()[-1].startswith("No version is marked best: no verified version was timed")
    assert listed.stdout.count("not timed") == 3


@pytest.mark.parametrize("objective", ["time", "energy"])
def test_the_version_marked_best_is_the_best_by_the_trees_objective(tmp_path, kernel, objective):
    searched(tmp_path / ".cutegen", kernel, objective)
    listed = _cutegen(tmp_path, "versions", "k.cu")
    assert listed.returncode == 0, listed.stderr
    (best,) = _best_lines(listed.stdout)
    assert best.endswith(BEST[objective])
    if objective == "energy":
        assert "2.50× energy ±2%" in best and "judged by energy" in listed.stdout


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_restore_best_offers_the_best_version_by_the_trees_objective(tmp_path, kernel):
    searched(tmp_path / ".cutegen", kernel, "energy")  # by time the best would be A
    restored = _cutegen(tmp_path, "restore-best", "k.cu")
    assert restored.returncode == 0, restored.stderr
    assert "restores version" in restored.stderr and BEST["energy"] in restored.stderr
    b_text = CHANGES[BEST["energy"]][0]
    assert "+  y[i] = 0.5f + 0.0f;" in restored.stdout and kernel.read_text() == START  # offered, not applied
    kernel.write_text(b_text)
    again = _cutegen(tmp_path, "restore-best", "k.cu")
    assert "already the best version" in again.stderr + again.stdout
