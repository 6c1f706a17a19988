"""On the GPU: the judge's clock, reference and verdict are out of the candidate's reach (tests/kernels/cheats/,
the gpu_ files: softsign through the adversarial corpus's one load_inline extension). A cheat that slows the
reference or shortens the clock in its own process changes nothing the judge measures; one that skips work
when timed is named; the hand-off between the two processes is measured and bounded.

    pytest -m gpu tests/gpu/test_isolation_gpu.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cutegen.harness.run import verify_kernel
from cutegen.session import Session
from cutegen.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "kernels" / "cheats"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    settings = Settings(test_timeout=300, build_timeout=600)
    state = Path(os.environ.get("CUTEGEN_JUDGE_STATE") or tmp_path_factory.mktemp("isolation-state"))
    session = Session(settings, state_dir=state)  # as the CLI's, with --state-dir
    yield session.builder(CHEATS), session.worker(), state
    session.close()


def bench(engine, name: str):
    builder, worker, state = engine
    return verify_kernel(CHEATS / f"{name}.py", builder, worker, state_dir=state, timing=True, baselines=("eager",))


@pytest.fixture(scope="module")
def control(engine):
    record = bench(engine, "gpu_honest")
    assert record.verdict == "pass", record.message
    return record


@pytest.mark.gpu
def test_a_slowed_reference_is_timed_as_it_is(engine, control):
    record = bench(engine, "gpu_slows_reference")
    assert record.verdict == "pass", record.message
    ratio = record.baselines["eager"].median_ms / control.baselines["eager"].median_ms
    assert 0.7 < ratio < 1.4, f"eager {record.baselines['eager'].median_ms} vs {control.baselines['eager'].median_ms}"


@pytest.mark.gpu
def test_a_shortened_clock_does_not_shorten_the_judges(engine, control):
    record = bench(engine, "gpu_shortens_clock")
    assert record.verdict == "pass", record.message
    ratio = record.timing.median_ms / control.timing.median_ms
    assert 0.7 < ratio < 1.4, f"kernel {record.timing.median_ms} vs {control.timing.median_ms}"


@pytest.mark.gpu
def test_work_skipped_when_timed_is_named(engine, control):
    assert bench(engine, "gpu_counts_calls").verdict in ("timed-calls-wrong", "cached-results")


@pytest.mark.gpu
@pytest.mark.parametrize("name,verdicts", [("patch_reference", {"mismatch"}), ("forge_reply", {"candidate-protocol"}),
                                           ("patch_judge", {"mismatch"}), ("exits_mid_call", {"crashed"})])
def test_the_cpu_corpus_is_named_on_the_gpu_too(engine, name, verdicts):
    builder, worker, state = engine
    record = verify_kernel(CHEATS / f"{name}.py", builder, worker, state_dir=state, trials=3)
    assert record.verdict in verdicts, record.message


@pytest.mark.gpu
def test_the_record_keeps_the_fresh_seeds(engine, control):
    other = bench(engine, "gpu_honest")
    assert control.details["seeds"] != other.details["seeds"]


@pytest.mark.gpu
def test_a_new_candidate_is_loaded_in_the_spare_process(tmp_path):
    """A candidate never seen before does not wait for a process, torch and a CUDA context: the spare started after
    the previous request serves it, and the process that served that one is gone."""
    from cutegen.harness.gpu_checks import judge
    from cutegen.harness.problem import load_problem
    from cutegen.harness.remote import Candidates
    from cutegen.pairing import find_problem

    honest = CHEATS / "gpu_honest.py"
    problem = load_problem(find_problem(honest))
    text = honest.read_text().replace('Path(__file__).resolve().parent.parent / "adversarial"',
                                      repr(str(CHEATS.parent / "adversarial")))
    copies = [tmp_path / f"candidate_{i}.py" for i in range(2)]
    for i, copy in enumerate(copies):
        copy.write_text(text + f"\n# copy {i}\n")  # two contents: two candidates
    candidates = Candidates()
    served = []
    try:
        for copy in copies:
            with candidates.loaded(kind="modelnew", path=str(copy), device="cuda", init=problem.init_values(0),
                                   seed=0) as lib:
                served.append(lib.process)
                assert judge(problem, lib, trials=2, seed=1, timing=False, baselines=[])["verdict"] == "pass"
            assert candidates._spare is not None and candidates._spare.alive()
        assert served[1] is not served[0] and not served[0].alive()
        assert served[1].handoff_ms is not None and served[1].handoff_ms < 2.0
    finally:
        candidates.stop()
    assert not served[1].alive()
