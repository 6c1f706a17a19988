"""On the GPU: the adversarial corpus (tests/kernels/adversarial/), written as other agents write kernels -- ABI `.cu`
launchers and KernelBench `ModelNew` files on one shared load_inline build -- each gets its class's verdict, and
none passes; the controls (a side stream ordered both ways) pass. Against one reference (softsign_ref.py, 16 MB).

    pytest -m gpu tests/gpu/test_adversarial_gpu.py
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.harness.run import verify_kernel
from cutegen.session import Session
from cutegen.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "kernels" / "adversarial"

# Unordered with the caller's stream both ways, but short: in a staged trial it runs (on poison) before the caller
# reads, and only a re-run may catch the caller reading its result unfinished. Either name is its class.
UNORDERED_SHORT = ("inputs-not-awaited", "other-stream")

ABI = {  # kernel -> (verdict or verdicts, mismatch pattern or None)
    "side_stream_no_wait": ("inputs-not-awaited", None),
    "wrong_stream_wait": ("inputs-not-awaited", None),
    "default_stream": (UNORDERED_SHORT, None),
    "result_not_ready": ("result-not-ready", None),
    "event_not_waited": ("result-not-ready", None),
    "unordered_both_ways": ("other-stream", None),
    "caches_by_pointer": ("cached-results", None),
    "partial_write": ("mismatch", "tail"),
    "half_precision": ("mismatch", None),
    "side_stream_correct": ("pass", None),
}
MODELNEW = {
    "modelnew_lazy": "lazy-output",
    "modelnew_expanded": "expanded-output",
    "modelnew_side_stream": UNORDERED_SHORT,
    "modelnew_wrong_stream": "inputs-not-awaited",
    "modelnew_not_joined": "result-not-ready",
    "modelnew_event_not_waited": "result-not-ready",
    "modelnew_cached_shape": "cached-results",
    "modelnew_partial": "mismatch",
    "modelnew_half": "mismatch",
    "modelnew_side_stream_correct": "pass",
}


def _build_shared_extension() -> None:
    """load_inline's build of the ModelNew files' one extension (a minute), here beside the ABI builds; the worker's
    import then finds it built (torch's extension cache, keyed by name and sources)."""
    import importlib
    import sys

    sys.path.insert(0, str(CORPUS))
    importlib.import_module("_softsign_ext")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """One builder and worker for the module; every ABI kernel and the ModelNew extension built up front, in
    parallel (plain CUDA: seconds each)."""
    settings = Settings(test_timeout=120, build_timeout=600)
    state = Path(os.environ.get("CUTEGEN_JUDGE_STATE") or tmp_path_factory.mktemp("adversarial-state"))
    session = Session(settings, state_dir=state)  # as the CLI's, with --state-dir
    builder = session.builder(CORPUS)
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        extension = pool.submit(_build_shared_extension)
        builds = dict(zip(ABI, pool.map(lambda n: builder.run(Tier.BUILD, CORPUS / f"{n}.cu"), ABI)))
        extension.result()
    yield builder, session.worker(), state, builds
    session.close()


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(ABI), ids=str)
def test_abi_kernel_gets_its_verdict(engine, name):
    builder, worker, state, builds = engine
    assert builds[name].ok, [d.format() for d in builds[name].errors]
    verdict, pattern = ABI[name]
    record = verify_kernel(CORPUS / f"{name}.cu", builder, worker, state_dir=state)
    assert record.verdict in _names(verdict), record.message
    if pattern:
        assert record.mismatch.pattern == pattern, record.message


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(MODELNEW), ids=str)
def test_modelnew_gets_its_verdict(engine, name):
    builder, worker, state, _ = engine
    record = verify_kernel(CORPUS / f"{name}.py", builder, worker, state_dir=state)
    assert record.verdict in _names(MODELNEW[name]), record.message


def _names(expected) -> tuple[str, ...]:
    return expected if isinstance(expected, tuple) else (expected,)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["half_precision.cu", "modelnew_half.py"])
def test_the_half_precision_kernels_pass_only_at_a_looser_tolerance(engine, kernel, tmp_path):
    """What makes them adversarial: at fp16's tolerance (1e-2) they pass, at fp32's they must not."""
    builder, worker, state, _ = engine
    loose = tmp_path / "softsign_loose.py"
    loose.write_text((CORPUS / "softsign_ref.py").read_text() + "\nCUTEGEN_ATOL = CUTEGEN_RTOL = 1e-2\n")
    record = verify_kernel(CORPUS / kernel, builder, worker, problem=loose, state_dir=state)
    assert record.verdict == "pass", record.message


@pytest.mark.gpu
def test_a_bench_of_a_correct_kernel_carries_intervals_and_fp64_errors(engine):
    """The control timed against eager: interleaved rounds in the record, an interval on every ratio."""
    from cutegen.records import RunRecord

    builder, worker, state, _ = engine
    record = verify_kernel(CORPUS / "side_stream_correct.cu", builder, worker, state_dir=state, timing=True,
                           baselines=("eager",))
    assert record.verdict == "pass", record.message
    r: RunRecord = record
    assert len(r.timing.block_ms) >= 10 and r.timing.calls_per_block >= 1
    assert r.speedup_interval("eager") is not None and ("[" in r.summary() or "within noise" in r.summary())
    assert r.accuracy.truth == "fp64" and r.accuracy.kernel_error <= 1.0


@pytest.mark.gpu
def test_a_second_verify_in_a_process_reuses_the_first_ones_memory(engine):
    """The judge calls on one stream for the process's life: the caching allocator keeps freed blocks per stream,
    and a new stream per verify made every verify allocate its buffers afresh (and, once the card was full of
    other streams' blocks, free them all and synchronize)."""
    import torch

    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.gpu_checks import judge
    from cutegen.harness.problem import load_problem
    from cutegen.pairing import find_problem

    _, _, _, builds = engine
    kernel = CORPUS / "side_stream_correct.cu"
    problem, lib = load_problem(find_problem(kernel)), KernelLibrary(builds["side_stream_correct"].artifact)
    assert judge(problem, lib, trials=2, seed=0, timing=False, baselines=[])["verdict"] == "pass"
    before = torch.cuda.memory_stats()
    assert judge(problem, lib, trials=2, seed=1, timing=False, baselines=[])["verdict"] == "pass"
    after = torch.cuda.memory_stats()
    assert after["num_device_alloc"] == before["num_device_alloc"], "the second verify allocated new device memory"
