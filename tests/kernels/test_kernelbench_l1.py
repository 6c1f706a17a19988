"""KernelBench level 1 (examples/kernelbench/level1): every `N_*.py` there is a problem the suite runs, its CuTe
kernel sits beside it under the same stem, and that kernel compiles clean at the check tier (nvcc to PTX, ptxas
for the target arch), with the header the folder's README promises. Compiles go through the shared test build cache
(tests/conftest.py), so a warm run costs no nvcc call. On a GPU, each kernel also runs against its own Model at
shapes and input signs the benchmark never shows; the figures come from `cutegen bench`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.model import Severity
from cutegen.suite.problems import discover, is_problem, match_kernels
from tests.support.paths import ROOT

LEVEL1 = ROOT / "examples" / "kernelbench" / "level1"
PROBLEMS = sorted((p for p in LEVEL1.glob("*.py") if re.match(r"\d+_", p.name)),
                  key=lambda p: int(p.name.split("_", 1)[0]))
ACTIVATIONS = [p for p in PROBLEMS if 19 <= int(p.name.split("_", 1)[0]) <= 32]


def test_the_folder_holds_the_activation_problems():
    numbers = {int(p.name.split("_", 1)[0]) for p in PROBLEMS}
    assert set(range(19, 33)) <= numbers, f"missing: {sorted(set(range(19, 33)) - numbers)}"


@pytest.mark.slow
@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.stem)
def test_problem_has_a_kernel_that_compiles_clean(problem, builder):
    assert is_problem(problem), f"{problem.name} is not a KernelBench problem (Model, get_inputs, get_init_inputs)"
    (entry,) = match_kernels(discover([problem]), LEVEL1)
    kernel = problem.with_suffix(".cu")
    assert entry.kernel == kernel.resolve(), f"`cutegen suite` pairs {problem.name} with {entry.kernel}"

    result = builder.run(Tier.CHECK, kernel)
    assert result.ok, [d.message for d in result.diagnostics] or result.raw_log[-2000:]
    unclean = [f"{d.line}: {d.severity.value} {d.code}: {d.message}" for d in result.diagnostics
               if d.severity is not Severity.INFO]  # info: the per-kernel register/smem notes ptxas -v gives
    assert not unclean, unclean
    # A contributor without a GPU cannot write the figures truthfully: "not measured yet" until a GPU run does.
    measured = r"^// Measured (?:\(H200[^)]*\): \S|: not measured yet)"
    assert re.search(measured, kernel.read_text(), re.M), "the header lacks its Measured line"


def test_kernels_of_models_with_constructor_arguments_receive_them():
    """#20 LeakyReLU (negative_slope), #24 LogSoftmax (dim), #31 ELU (alpha): a kernel that hard-codes the Model's
    default is silently wrong for Model(0.2). Each exports the ABI's v2 entry point, which receives
    get_init_inputs(), and none still exports the v1 one (the harness would call v2 anyway)."""
    import inspect

    from cutegen.harness.problem import load_problem

    taking = []
    for problem in PROBLEMS:
        if len(inspect.signature(load_problem(problem).module.Model.__init__).parameters) > 1:
            text = problem.with_suffix(".cu").read_text()
            assert "cutegen_forward_v2" in text and "int cutegen_forward(" not in text, problem.name
            taking.append(int(problem.name.split("_", 1)[0]))
    assert taking == [20, 24, 31]


# -- on the GPU: the shapes and values the benchmark never shows ------------------------------------------------

# (rows, dim): tails, rows fewer than the persistent clusters and many more (the row loop and its parity), a chunk
# per CTA that is empty for some cluster ranks, dim % 4 != 0 (the fallback), rows longer than the clusters' shared
# memory (re-read from global), a handful of elements.
SHAPES = [(3, 16389), (1, 5), (40, 1000), (17, 12), (5, 1001), (3, 524288)]


def _small_problem(problem: Path, rows: int, dim: int, folder: Path) -> Path:
    """The KernelBench problem with other sizes and x ~ 8 * N(0, 1) instead of U[0, 1): the negative branches
    (LeakyReLU, ELU, SELU, HardTanh), Softplus's threshold and softmax's running-max rescale get exercised."""
    text = problem.read_text()
    assert "batch_size = 4096\ndim = 393216" in text and "torch.rand(batch_size, dim)" in text
    text = text.replace("batch_size = 4096\ndim = 393216", f"batch_size = {rows}\ndim = {dim}")
    text = text.replace("torch.rand(batch_size, dim)", "torch.randn(batch_size, dim) * 8")
    if "softmax(" in text and "log_softmax" not in text:
        text += "\n\nCUTEGEN_ATOL = 1e-8  # outputs are down to ~1e-20: compare relatively\nCUTEGEN_RTOL = 1e-4\n"
    path = folder / f"{problem.stem}_{rows}x{dim}.py"
    path.write_text(text)
    return path


ENGINE_SETTINGS = {"test_timeout": 90}  # the GPU tests' `engine` fixture's (tests/conftest.py)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("problem", ACTIVATIONS, ids=lambda p: p.stem)
def test_kernel_passes_on_other_shapes_and_signed_inputs(problem, shape, engine, tmp_path):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    ref = _small_problem(problem, *shape, tmp_path)
    record = verify_kernel(problem.with_suffix(".cu"), builder, worker, problem=ref, state_dir=state)
    assert record.verdict == "pass", record.message


def _with_init(problem: Path, init: str, folder: Path) -> Path:
    """The problem at a small size, signed inputs, and Model built from other constructor arguments."""
    text = problem.read_text().replace("batch_size = 4096\ndim = 393216", "batch_size = 37\ndim = 1001")
    text = text.replace("torch.rand(batch_size, dim)", "torch.randn(batch_size, dim) * 8")
    text = re.sub(r"def get_init_inputs\(\):\n    return .*", f"def get_init_inputs():\n    return {init}", text)
    path = folder / f"{problem.stem}_init.py"
    path.write_text(text)
    return path


INIT_CASES = [("20_LeakyReLU", "[0.2]", "pass"), ("20_LeakyReLU", "[-1.5]", "pass"), ("31_ELU", "[0.5]", "pass"),
              ("31_ELU", "[2.0]", "pass"), ("24_LogSoftmax", "[-1]", "pass"),
              ("24_LogSoftmax", "[0]", "launch-error")]  # another dim is refused, never reduced along the wrong one


@pytest.fixture(scope="module")
def init_kernels(engine):
    """The three kernels built at once (each a CuTe build of ~20-40 s), before their tests verify them."""
    from concurrent.futures import ThreadPoolExecutor

    builder = engine[0]
    names = sorted({n for n, _, _ in INIT_CASES})
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(lambda n: builder.run(Tier.BUILD, LEVEL1 / f"{n}.cu"), names))
    return engine


@pytest.mark.gpu
@pytest.mark.parametrize("name,init,verdict", INIT_CASES, ids=[f"{n}-{i}" for n, i, _ in INIT_CASES])
def test_kernel_computes_with_non_default_init_values(name, init, verdict, init_kernels, tmp_path):
    from cutegen.harness.run import verify_kernel

    builder, worker, state = init_kernels
    problem = LEVEL1 / f"{name}.py"
    record = verify_kernel(problem.with_suffix(".cu"), builder, worker, problem=_with_init(problem, init, tmp_path),
                           state_dir=state)
    assert record.verdict == verdict, record.message
    assert "init_inputs_unseen" not in record.details


MATMULS = [p for p in PROBLEMS if int(p.name.split("_", 1)[0]) <= 18]


def _signed(problem: Path, folder: Path) -> Path:
    """The problem at its own sizes with signed inputs (torch.randn for torch.rand): where the fp32 eager reference
    is itself several tolerances from the exact product (large K worst), so the fp64 truth decides."""
    text = problem.read_text()
    assert "torch.rand(" in text
    path = folder / f"{problem.stem}_signed.py"
    path.write_text(text.replace("torch.rand(", "torch.randn("))
    return path


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("problem", MATMULS, ids=lambda p: p.stem)
def test_matmul_on_signed_inputs_passes_against_the_fp64_truth(problem, engine, tmp_path):
    """Passes when the kernel is within tolerance of the fp64 result or no farther from it than fp32 cuBLAS (the
    errors are printed for the table: `-s`). #4 matrix-vector must be within tolerance outright (cuBLAS: 0.81x)."""
    from cutegen.harness.run import verify_kernel

    builder, worker, state = engine
    builder.settings.test_timeout = 300
    record = verify_kernel(problem.with_suffix(".cu"), builder, worker, problem=_signed(problem, tmp_path),
                           state_dir=state)
    acc = record.accuracy
    print(f"{problem.stem}: {record.verdict} kernel {acc and acc.kernel_error} fp32-eager {acc and acc.reference_error}")
    assert record.verdict == "pass", record.message
    assert acc.truth == "fp64"
    if problem.name.startswith("4_"):
        assert acc.kernel_error <= 1.0, record.message
