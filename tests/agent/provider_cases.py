"""One small kernel pair the provider-mode tests (CLI and editor) share, so that every mode verifies the same
candidates and the build cache compiles each once per session: a broken kernel and its fix, a passing kernel
and its one-change optimization, a problem that pairs them (no GPU here: "not run"), and the scripted
replies for each action with a mode's extras (think blocks, reasoning_content, refusal, cut-offs, resets)."""

from __future__ import annotations

from pathlib import Path

PROBLEM = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return 0.5 * x


def get_inputs():
    return [torch.rand(16, 64)]


def get_init_inputs():
    return []
"""

GOOD = """// cutegen: problem=halve.py
#include <cutegen/abi.h>

__global__ void halve_kernel(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i];
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* in, int nin, DLTensor* out, int nout, cudaStream_t s) {
  long n = (long)cutegen_numel(in[0]);
  halve_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(
      cutegen_data<const float>(in[0]), cutegen_data<float>(out[0]), n);
  return (int)cudaGetLastError();
}
"""
BROKEN = GOOD.replace("y[i] = 0.5f * x[i];", "y[i] = HALF * x[i];")
OPTIMIZED = GOOD.replace("(n + 255) / 256), 256,", "(n + 511) / 512), 512,")

DIAGNOSIS = "**What**: `HALF` on line 6 is not declared. **Why**: it was never defined. **Fix**: use `0.5f`."
FIX = """The constant is undeclared; use the literal:

<<<<<<< SEARCH
  if (i < n) y[i] = HALF * x[i];
=======
  if (i < n) y[i] = 0.5f * x[i];
>>>>>>> REPLACE
"""
OPTIMIZE = """CHANGE: block size — 512-thread blocks halve the number of blocks to schedule.

<<<<<<< SEARCH
  halve_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(
=======
  halve_kernel<<<(unsigned)((n + 511) / 512), 512, 0, s>>>(
>>>>>>> REPLACE
"""
FIX_LABEL = "compiled and built · not run: no GPU on this machine"
REFUSAL = "I can't help with modifying this kernel."


def write(folder: Path) -> Path:
    """The kernels and their problem in `folder` (the kernel files are never changed by the tests)."""
    (folder / ".git").mkdir(exist_ok=True)  # the workspace root, for the CLI as for the editor
    (folder / "halve.py").write_text(PROBLEM)
    (folder / "kernel.cu").write_text(BROKEN)
    (folder / "good.cu").write_text(GOOD)
    return folder


def fix_replies(**mode) -> list[dict]:
    """A diagnose and a patch reply, each with the mode's extras."""
    return [{"match": "TASK: diagnose", "reply": DIAGNOSIS, **mode}, {"match": "TASK: patch", "reply": FIX, **mode}]


def optimize_replies(**mode) -> list[dict]:
    return [{"match": "TASK: optimize", "reply": OPTIMIZE, **mode}]
