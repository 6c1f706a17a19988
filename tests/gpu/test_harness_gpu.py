"""On the GPU: every example passes, every cheating or broken kernel gets its named verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.harness.run import verify_kernel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/*.cu") if p.with_suffix(".py").exists())
KERNELS = ROOT / "tests" / "kernels"

EXPECTED = {  # cheat or bug → the verdict a skeptic expects (and the mismatch pattern, where it applies)
    "zero_output": ("constant-output", None),
    "constant_output": ("constant-output", None),
    "mutates_input": ("inputs-mutated", None),
    # its own stream, no event either way, but a 20 ms delay first: by then the inputs are written, so what
    # shows is the result the caller read before it was there
    "other_stream": ("result-not-ready", None),
    "caches_results": ("cached-results", None),
    "tail_bug": ("mismatch", "tail"),
    "strided_bug": ("mismatch", "periodic"),
    "illegal_address": ("cuda-error", None),
    "hang": ("timeout", None),
}


ENGINE_SETTINGS = {"test_timeout": 90}  # the `engine` fixture's (tests/conftest.py)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", EXAMPLES, ids=lambda p: p.stem)
def test_example_passes(engine, kernel):
    builder, worker, state = engine
    record = verify_kernel(kernel, builder, worker, state_dir=state)
    assert record.verdict == "pass", record.message


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(EXPECTED), ids=str)
def test_cheat_or_bug_gets_its_verdict_and_next_run_works(engine, name):
    builder, worker, state = engine
    kernel = KERNELS / f"{name}.cu"
    if not kernel.exists():
        pytest.skip(f"{kernel.name} not written")
    verdict, pattern = EXPECTED[name]
    if name == "hang":
        builder.settings.test_timeout = 20
    try:
        record = verify_kernel(kernel, builder, worker, state_dir=state)
    finally:
        builder.settings.test_timeout = 90
    assert record.verdict == verdict, record.message
    if pattern:
        assert record.mismatch.pattern == pattern, record.message
    # The worker survived or was replaced: a correct kernel still passes right after.
    good = ROOT / "examples" / "softsign" / "softsign.cu"
    assert verify_kernel(good, builder, worker, state_dir=state).verdict == "pass"


@pytest.mark.gpu
def test_modelnew_alias_cheat_is_named(engine):
    builder, worker, state = engine
    record = verify_kernel(KERNELS / "modelnew_alias.py", builder, worker, state_dir=state)
    assert record.verdict == "output-aliases-input", record.message


@pytest.mark.gpu
def test_modelnew_load_inline_example_passes(engine):
    builder, worker, state = engine
    builder.settings.build_timeout = 400
    record = verify_kernel(ROOT / "examples/softsign_modelnew/softsign_modelnew.py", builder, worker, state_dir=state)
    assert record.verdict == "pass", record.message


@pytest.mark.gpu
def test_modelnew_with_random_weights_passes(engine):
    """Depthwise conv + linear with kaiming-uniform weights: built from the reference's random state on the GPU."""
    builder, worker, state = engine
    record = verify_kernel(KERNELS / "modelnew_depthwise.py", builder, worker, state_dir=state)
    assert record.verdict == "pass", record.message
