"""A kernel paired with a problem but without `cutegen_forward`: the check tier says so, no GPU needed."""

from __future__ import annotations

from pathlib import Path

from cutegen.compile import Tier
from cutegen.compile.launcher import defines_launcher, missing_launcher
from tests.support.paths import ROOT

REF = ROOT / "examples" / "softsign_modelnew" / "softsign_modelnew_ref.py"
KERNEL = """\
// cutegen: problem=softsign_ref.py
#include <cutegen/abi.h>

__global__ void softsign_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + fabsf(x[i]));
}
"""


def test_commented_out_launcher_does_not_count():
    assert not defines_launcher("// CUTEGEN_EXPORT int cutegen_forward(...)\n__global__ void k() {}")
    assert defines_launcher("CUTEGEN_EXPORT int cutegen_forward(const DLTensor* in, int n) { return 0; }")


def test_the_v2_launcher_counts():
    """ABI v2 (a model's get_init_inputs() values first: KernelBench #20, #24, #31) is a launcher too."""
    v2 = "CUTEGEN_EXPORT int cutegen_forward_v2(const DLTensor* init, int num_init, const DLTensor* in, int n)"
    assert defines_launcher(v2 + " { return 0; }")
    assert missing_launcher(Path("k.cu"), KERNEL + v2 + " { return 0; }\n", Path("softsign_ref.py")) is None


def test_warning_sits_on_the_problem_directive():
    d = missing_launcher(Path("k.cu"), KERNEL, Path("softsign_ref.py"))
    assert (d.line, d.severity.value, d.code) == (1, "warning", "missing-launcher")
    assert "softsign_ref.py" in d.message and "cutegen_forward" in d.message
    sibling = missing_launcher(Path("k.cu"), KERNEL.split("\n", 1)[1], Path("k.py"))
    assert sibling.line == 3  # no directive: the first kernel


def test_check_of_a_paired_kernel_without_launcher_warns(builder, tmp_path):
    (tmp_path / "softsign_ref.py").write_text(REF.read_text())
    kernel = tmp_path / "softsign.cu"
    kernel.write_text(KERNEL)
    result = builder.run(Tier.CHECK, kernel)
    assert result.ok  # it compiles; only the harness could not call it
    (w,) = [d for d in result.diagnostics if d.code == "missing-launcher"]
    assert w.line == 1
    unpaired = tmp_path / "alone" / "softsign.cu"
    unpaired.parent.mkdir()
    unpaired.write_text(KERNEL.split("\n", 1)[1])
    assert not [d for d in builder.run(Tier.CHECK, unpaired).diagnostics if d.code == "missing-launcher"]
