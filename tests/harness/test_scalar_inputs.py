"""Python numbers in get_inputs() (KernelBench L1 #5 passes `s = 3.14`) reach the kernel ABI as 0-d host tensors,
and the reference computes with them exactly as with the number."""

from __future__ import annotations

import pytest
import torch

from cutegen.harness.abi import _dl, kernel_arguments
from cutegen.harness.gpu_checks import Failed, judge
from cutegen.harness.problem import load_problem

PROBLEM = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, A, s):
        return A * s
def get_inputs():
    return [torch.rand(64, 48), {scalar}]
def get_init_inputs():
    return []
"""


def problem_with(tmp_path, scalar: str):
    p = tmp_path / "matrix_scalar.py"
    p.write_text(PROBLEM.replace("{scalar}", scalar))
    return load_problem(p)


class Abi:
    """A CPU stand-in called the way a built kernel is (KernelLibrary.arguments: numbers as 0-d host tensors)."""

    arguments = staticmethod(kernel_arguments)

    def __init__(self, body):
        self.body = body

    def __call__(self, inputs, outputs, stream):
        return self.body(inputs, outputs, stream)


def verdict(problem, kernel) -> str:
    try:
        return judge(problem, Abi(kernel), trials=3, seed=0, timing=False, baselines=[])["verdict"]
    except Failed as v:
        return v.verdict.value


def scale_kernel(inputs, outputs, stream):
    """What a C launcher does: read the host scalar by value, round it to the output's dtype, multiply."""
    a, s = inputs
    assert s.dim() == 0 and s.device.type == "cpu"
    outputs[0].copy_(a * torch.tensor(float(s), dtype=torch.float32))
    return 0


def test_a_float_scalar_reaches_the_kernel_and_passes(tmp_path):
    assert verdict(problem_with(tmp_path, "3.14"), scale_kernel) == "pass"


def test_an_int_scalar_passes_too(tmp_path):
    assert verdict(problem_with(tmp_path, "3"), scale_kernel) == "pass"


def test_a_kernel_that_ignores_the_scalar_is_a_mismatch(tmp_path):
    def ignores(inputs, outputs, stream):
        outputs[0].copy_(inputs[0] * 3.0)
        return 0
    assert verdict(problem_with(tmp_path, "3.14"), ignores) == "mismatch"


def test_other_non_tensor_inputs_are_still_a_problem_error_that_names_the_type(tmp_path):
    assert verdict(problem_with(tmp_path, "'3.14'"), scale_kernel) == "problem-error"
    with pytest.raises(Failed) as e:
        judge(problem_with(tmp_path, "[1, 2]"), Abi(scale_kernel), trials=1, seed=0, timing=False, baselines=[])
    assert e.value.verdict.value == "problem-error" and "list" in e.value.message


def test_the_abi_gets_the_float_exactly_and_a_modelnew_style_callable_gets_the_number(tmp_path):
    seen = []

    def records(inputs, outputs, stream):
        seen.append(inputs[1])
        outputs[0].copy_(inputs[0] * inputs[1])
        return 0
    assert verdict(problem_with(tmp_path, "3.14159265358979"), records) == "pass"  # through Abi: a 0-d host tensor
    assert (seen[0].dtype, seen[0].dim(), seen[0].device.type, float(seen[0])) == (torch.float64, 0, "cpu", 3.14159265358979)
    seen.clear()
    judge(problem_with(tmp_path, "3.14159265358979"), records, trials=1, seed=0, timing=False, baselines=[])
    assert type(seen[0]) is float  # no `arguments`: a ModelNew takes the number as the reference does


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("number", [3.14, 3, -0.1])
def test_the_wrapped_number_computes_bit_for_bit_like_the_python_number(dtype, number):
    a = torch.rand(1000).to(dtype)
    held = torch.tensor(number, dtype=torch.float64 if isinstance(number, float) else None)
    assert (a * held).dtype == (a * number).dtype
    assert torch.equal((a * held).view(-1), (a * number).view(-1))


def test_the_kernel_sees_a_host_float64_dltensor():
    keep: list = []
    t = _dl(torch.tensor(3.14, dtype=torch.float64), keep)
    assert (t.device.device_type, t.ndim, t.dtype.code, t.dtype.bits) == (1, 0, 2, 64)  # kDLCPU, 0-d, float64
