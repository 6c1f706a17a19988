"""KernelBench level 1 (examples/kernelbench/level1): every `N_*.py` there is a problem the suite runs, its CuTe
kernel sits beside it under the same stem, and that kernel compiles clean at the check tier (nvcc to PTX, ptxas
for the target arch), with the header the folder's README promises. No GPU: the figures come from `cutegen bench`.
Compiles go through the shared test build cache (tests/conftest.py), so a warm run costs no nvcc call."""

from __future__ import annotations

import re

import pytest

from cutegen.build import Tier
from cutegen.model import Severity
from cutegen.suite.problems import discover, is_problem, match_kernels
from tests.conftest import ROOT

LEVEL1 = ROOT / "examples" / "kernelbench" / "level1"
PROBLEMS = sorted((p for p in LEVEL1.glob("*.py") if re.match(r"\d+_", p.name)),
                  key=lambda p: int(p.name.split("_", 1)[0]))


def test_the_folder_holds_problems():
    assert PROBLEMS, f"no N_*.py problem files in {LEVEL1}"


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
    assert re.search(r"^// Measured \(H200\): \S", kernel.read_text(), re.M), "the header lacks its Measured line"
