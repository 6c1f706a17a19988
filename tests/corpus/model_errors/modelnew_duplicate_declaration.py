# KernelBench level 1 #27 (SELU) as a ModelNew: a CUDA kernel built with load_inline.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

THREADS = 256
ELEMS_PER_THREAD = 4


def launch_blocks(numel: int) -> int:
    # one block per THREADS * ELEMS_PER_THREAD elements, at least one
    return max(1, (numel + THREADS * ELEMS_PER_THREAD - 1) // (THREADS * ELEMS_PER_THREAD))


selu_source = """
// cutegen-corpus: semantic: a patch re-inserted the launch configuration, so `threads` is declared twice
// expect-root: "threads" has already been declared
#include <torch/extension.h>

__global__ void selu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const float alpha = 1.6732632423543772f;
    const float scale = 1.0507009873554805f;
    int64_t start = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 4;
    for (int64_t i = start; i < start + 4 && i < n; ++i) {
        float v = x[i];
        y[i] = scale * (v > 0.f ? v : alpha * (expf(v) - 1.f));
    }
}

torch::Tensor selu_cuda(torch::Tensor x, int64_t blocks) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    if (n == 0) {
        return y;
    }
    const int threads = 256;  // BUG
    selu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

selu_cpp_source = "torch::Tensor selu_cuda(torch::Tensor x, int64_t blocks);"

selu = load_inline(
    name="selu",
    cpp_sources=selu_cpp_source,
    cuda_sources=selu_source,
    functions=["selu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.selu = selu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        return self.selu.selu_cuda(x, launch_blocks(x.numel()))
