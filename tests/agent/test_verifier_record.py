"""The Verifier reads the harness's typed record: a candidate's test and timed run through verify_kernel, on the real
check and build tiers (nvcc in the jail) and a worker that replays the H200's replies (no GPU here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cutegen.agent.candidates import Verifier

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "records" / "h200"
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"
PRODUCER_KEYS = ("schema", "kind", "file", "time", "seconds", "kernel", "problem", "environment", "build")

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="candidates run only in the bubblewrap jail")


class _Replay:
    """Stands in for the jailed GPU worker: the recorded reply, less what run.py adds itself."""

    def __init__(self, fixture: str):
        self.reply = {k: v for k, v in json.loads((H200 / fixture).read_text()).items() if k not in PRODUCER_KEYS}
        self.calls: list[dict] = []

    def call(self, request: dict, timeout: float) -> dict:
        self.calls.append(request)
        return dict(self.reply)


def _verifier(builder, folder: Path, fixture: str) -> tuple[Verifier, _Replay]:
    """The Verifier on the shared test build cache; `folder` a kept one: the candidate's shadow copy (which the build
    tier compiles) lies under its state dir, so a warm run finds its build there."""
    replay = _Replay(fixture)
    return Verifier(builder, None, state_dir=folder / ".cutegen", gpu=True,
                    candidate_runner=lambda jail: replay), replay


@pytest.mark.slow
def test_a_faster_correct_candidate_is_verified_from_the_records_figures(builder, kept_path):
    verifier, replay = _verifier(builder, kept_path, "softsign-bench.json")
    v = verifier.candidate(SOFTSIGN, SOFTSIGN.read_text(), baseline={"median_ms": 6.34, "spread": 0.01})
    assert v.ok and v.verdict == "verified" and v.tiers == ["check", "build", "test", "time"], v.label
    assert v.figures["median_ms"] == pytest.approx(3.17, abs=0.01)
    assert v.figures["speedup"] == pytest.approx(2, abs=0.01)
    assert v.figures["gb_per_s"] > 4000 and "2.00× faster than before" in v.label
    assert [c["timing"] for c in replay.calls] == [False, True] and Path(v.record.path).is_file()


@pytest.mark.slow
def test_a_wrong_candidate_fails_with_the_records_verdict_and_mismatch(builder, kept_path):
    verifier, _ = _verifier(builder, kept_path, "tail_bug-test.json")
    v = verifier.candidate(SOFTSIGN, SOFTSIGN.read_text())
    assert not v.ok and v.verdict == "mismatch" and v.label.startswith("mismatch: ") and "Verdict." not in v.label
    assert "'pattern': 'tail'" in v.feedback and "'bad': 296" in v.feedback and Path(v.record.path).is_file()
