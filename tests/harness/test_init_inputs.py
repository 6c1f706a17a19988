"""get_init_inputs() values reach an ABI kernel (ABI v2: `cutegen_forward_v2(init, n, inputs, n, outputs, n,
stream)`), so a kernel for Model(0.2) computes with 0.2. Stand-in kernels on the CPU for the judge's side, and a
real shared library (host code, built with the system C++ compiler against abi.h) for the ctypes call itself."""

from __future__ import annotations

import pytest
import torch

from cutegen.harness.abi import KernelLibrary, init_arguments, kernel_arguments
from cutegen.harness.gpu_checks import Failed, judge
from cutegen.harness.problem import load_problem


LEAKY = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)
def get_inputs():
    return [torch.randn(32, 100)]
def get_init_inputs():
    return {init}
"""


def leaky(tmp_path, init: str):
    p = tmp_path / "leaky.py"
    p.write_text(LEAKY.replace("{init}", init))
    return load_problem(p)


class Abi:
    """A CPU stand-in called as a built kernel is: v2 receives the init values as KernelLibrary.bind_init makes
    them (0-d host tensors); `abi_version = 1` stands for a library that exports only cutegen_forward."""

    arguments = staticmethod(kernel_arguments)

    def __init__(self, body, abi_version: int = 2):
        self.body, self.abi_version, self.init = body, abi_version, []

    def bind_init(self, values):
        self.init = init_arguments(values)

    def __call__(self, inputs, outputs, stream):
        return self.body(self.init, inputs, outputs)


def reads_slope(init, inputs, outputs):
    slope = float(init[0]) if init else 0.01  # the Model's default when the problem passes none
    outputs[0].copy_(torch.nn.functional.leaky_relu(inputs[0], torch.tensor(slope, dtype=torch.float32).item()))
    return 0


def hard_coded(init, inputs, outputs):
    outputs[0].copy_(torch.nn.functional.leaky_relu(inputs[0], 0.01))
    return 0


def run(problem, kernel) -> dict:
    try:
        return judge(problem, kernel, trials=2, seed=0, timing=False, baselines=[])
    except Failed as f:
        return f.to_json()


def test_a_v2_kernel_computes_with_the_problems_init_value(tmp_path):
    assert run(leaky(tmp_path, "[0.2]"), Abi(reads_slope))["verdict"] == "pass"
    assert run(leaky(tmp_path, "[]"), Abi(reads_slope))["verdict"] == "pass"  # the Model's default


def test_a_hard_coded_default_is_wrong_for_model_0_2(tmp_path):
    """What #20 LeakyReLU did: right for Model(), silently wrong for Model(0.2) (no kernel could see the 0.2)."""
    assert run(leaky(tmp_path, "[0.2]"), Abi(hard_coded))["verdict"] == "mismatch"


def test_a_v1_kernel_of_a_problem_with_init_values_is_told_it_cannot_see_them(tmp_path):
    result = run(leaky(tmp_path, "[0.01]"), Abi(hard_coded, abi_version=1))
    assert result["verdict"] == "pass" and result.get("init_inputs_unseen")
    assert "cannot receive get_init_inputs()" in result["message"] and "cutegen_forward_v2" in result["message"]
    assert "init_inputs_unseen" not in run(leaky(tmp_path, "[]"), Abi(hard_coded, abi_version=1))


def test_init_values_become_what_the_abi_documents():
    number, count, dims, scale, flag, tensor = init_arguments([0.2, 3, (3, 5), [1, 2.5], True, torch.ones(2)])
    assert (number.dtype, number.dim(), number.device.type, float(number)) == (torch.float64, 0, "cpu", 0.2)
    assert (count.dtype, int(count)) == (torch.int64, 3)
    assert dims.dtype == torch.int64 and dims.tolist() == [3, 5]
    assert scale.dtype == torch.float64 and scale.tolist() == [1.0, 2.5]
    assert flag.dtype == torch.bool and torch.equal(tensor, torch.ones(2))


def test_an_init_value_the_abi_cannot_pass_is_a_problem_error_that_names_it(tmp_path):
    result = run(leaky(tmp_path, "['sum']"), Abi(reads_slope))
    assert result["verdict"] == "problem-error" and "get_init_inputs()[0] is a str" in result["message"]


# -- the real ctypes call ---------------------------------------------------------------------------------------

LAUNCHERS = {
    "v2": """
CUTEGEN_EXPORT int cutegen_forward_v2(const DLTensor* init, int num_init, const DLTensor* inputs, int num_inputs,
                                      DLTensor* outputs, int num_outputs, cudaStream_t stream) {
  (void)stream;
  bool ok = num_init <= 1 && num_inputs == 1 && num_outputs == 1;
  const float slope = float(cutegen_init_scalar(init, num_init, 0, 0.01, &ok));
  if (!ok) return cudaErrorInvalidValue;
  const float* x = cutegen_data<const float>(inputs[0]);  // host memory in this test
  float* y = cutegen_data<float>(outputs[0]);
  for (int64_t i = 0; i < cutegen_numel(inputs[0]); ++i) y[i] = x[i] > 0.f ? x[i] : x[i] * slope;
  return 0;
}
""",
    "v1": """
CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  (void)inputs; (void)num_inputs; (void)outputs; (void)num_outputs; (void)stream;
  return 0;
}
""",
    "none": "extern \"C\" int something_else() { return 0; }\n",
}


@pytest.fixture(scope="module")
def libraries(host_library):
    return {name: host_library(name, "#include <cutegen/abi.h>\n" + body) for name, body in LAUNCHERS.items()}


class HostStream:
    cuda_stream = 0


def test_the_v2_entry_point_is_called_with_the_bound_init_values(libraries):
    lib = KernelLibrary(libraries["v2"])
    assert lib.abi_version == 2
    x = torch.tensor([-2.0, -1.0, 0.5, 3.0])
    out = torch.full_like(x, float("nan"))
    assert lib([x], [out], HostStream()) == 0
    assert out.tolist() == pytest.approx([-0.02, -0.01, 0.5, 3.0])  # no init values: the Model's default
    lib.bind_init([0.2])
    assert lib([x], [out], HostStream()) == 0
    assert out.tolist() == pytest.approx([-0.4, -0.2, 0.5, 3.0])
    lib.bind_init([0.2, 0.3])
    assert lib([x], [out], HostStream()) == 1  # more values than the launcher takes: refused, not ignored
    lib.bind_init([(1, 2)])
    assert lib([x], [out], HostStream()) == 1  # a 1-d list where a number is expected


def test_a_v1_library_still_loads_and_a_library_without_a_launcher_is_named(libraries):
    assert KernelLibrary(libraries["v1"]).abi_version == 1
    with pytest.raises(LookupError, match="cutegen_forward_v2"):
        KernelLibrary(libraries["none"])
