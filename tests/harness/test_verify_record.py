"""verify_kernel hands back a typed RunRecord: the real build (nvcc, shared test cache) and a worker that replays what
the H200's worker answered (tests/records/h200), since this machine has no GPU. What the caller reads, what is
stored under `.cutegen/` and what a reader makes of it must be the same record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen import records
from cutegen.agent.candidates import _test_feedback
from cutegen.harness.run import verify_kernel
from cutegen.records import RunRecord

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "records" / "h200"
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"
PRODUCER_KEYS = ("schema", "kind", "file", "time", "seconds", "kernel", "problem", "environment", "build")


class _Replay:
    """Stands in for the GPU worker (none here): its reply is the recorded one, less what run.py adds itself."""

    def __init__(self, fixture: str, **change):
        self.reply = {k: v for k, v in json.loads((H200 / fixture).read_text()).items() if k not in PRODUCER_KEYS}
        self.reply.update(change)

    def call(self, request: dict, timeout: float) -> dict:
        return dict(self.reply)


@pytest.mark.slow
def test_a_bench_comes_back_typed_and_reads_back_the_same(builder, tmp_path):
    state = tmp_path / ".cutegen"
    record = verify_kernel(SOFTSIGN, builder, _Replay("softsign-bench.json"), timing=True, gpu=True, state_dir=state)
    assert isinstance(record, RunRecord) and record.verdict == "pass" and record.passed and record.level == "ok"
    assert record.summary() == "pass · 3.17 ms · 3.32× eager · 1.04× torch.compile · 95 % of HBM peak"
    assert record.timing.median_ms == pytest.approx(3.17, abs=0.01) and record.speedup("eager") > 3
    assert record.build.ok and record.kernel == str(SOFTSIGN.resolve()) and record.problem.endswith("softsign.py")
    stored = records.read(Path(record.path))
    assert stored.summary() == record.summary() and stored.to_json() == record.to_json()
    assert records.latest(state, str(SOFTSIGN.resolve()), "bench").summary() == record.summary()


@pytest.mark.slow
def test_a_mismatch_comes_back_typed_with_what_the_agent_is_told(builder, tmp_path):
    record = verify_kernel(SOFTSIGN, builder, _Replay("tail_bug-test.json"), gpu=True, state_dir=tmp_path / ".cutegen")
    assert record.verdict == "mismatch" and record.level == "error" and not record.passed
    assert record.summary() == "mismatch · tail (296 of 3,146,024 wrong)"
    assert record.mismatch.pattern == "tail" and record.mismatch.bad == 296
    feedback = _test_feedback(record)
    assert feedback.startswith("The harness verdict is `mismatch`: ") and "'pattern': 'tail'" in feedback
    assert "Verdict." not in feedback  # the enum's value, not its name


@pytest.mark.slow
def test_a_verdict_this_version_does_not_know_is_kept_and_shown_as_an_error(builder, tmp_path):
    """A newer remote worker's verdict (cutegen suite on a cluster): kept as it came, not a crash."""
    record = verify_kernel(SOFTSIGN, builder, _Replay("tail_bug-test.json", verdict="brand-new-check"), gpu=True,
                           state_dir=tmp_path / ".cutegen")
    assert record.verdict == "brand-new-check" and record.level == "error" and record.harness_verdict is None


def test_no_problem_is_a_typed_record_written_without_a_build(builder, tmp_path):
    kernel = tmp_path / "lonely.cu"
    kernel.write_text("__global__ void k() {}\n")
    record = verify_kernel(kernel, builder, None, state_dir=tmp_path / ".cutegen")
    assert record.verdict == "no-problem" and record.level == "info" and "lonely.py" in record.message
    assert record.build is None and records.read(Path(record.path)).verdict == "no-problem"
