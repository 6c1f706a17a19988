# KernelBench level 1 #29 (Softplus) as a ModelNew: a shared header string and the kernel, concatenated.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

common = """
#include <torch/extension.h>

__device__ __forceinline__ float softplus(float v, float beta, float threshold) {
    return v * beta > threshold ? v : log1pf(__expf(v * beta)) / beta;
}
"""

kernel = """
// cutegen-corpus: structure: a patch pasted the grid-stride loop header twice, in the second of two concatenated strings
// expect-root: line repeated
__global__ void softplus_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) {  // BUG
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) {  // BUG-ALT
        y[i] = softplus(x[i], 1.f, 20.f);
    }
}

torch::Tensor softplus_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    softplus_kernel<<<std::min<int64_t>((n + 255) / 256, 65535), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

softplus = load_inline(
    name="softplus",
    cpp_sources="torch::Tensor softplus_cuda(torch::Tensor x);",
    cuda_sources=common + kernel,
    functions=["softplus_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus.softplus_cuda(x.contiguous())
