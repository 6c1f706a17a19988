# KernelBench level 1 #25 (Swish) as a ModelNew: float4 loads with a scalar tail.
# if the input is not float32 or not contiguous, forward() falls back to PyTorch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

swish_source = """
// cutegen-corpus: semantic: a patch added a float4 path that uses `total_vec` but never declares it
// expect-root: `total_vec` is not declared (first used here)
#include <torch/extension.h>

__device__ __forceinline__ float swish(float v) { return v / (1.0f + __expf(-v)); }

__global__ void swish_vec4_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int64_t v = tid; v < total_vec; v += stride) {  // BUG
        float4 a = x4[v];
        a.x = swish(a.x);
        a.y = swish(a.y);
        a.z = swish(a.z);
        a.w = swish(a.w);
        y4[v] = a;
    }
    for (int64_t i = total_vec * 4 + tid; i < n; i += stride) {
        y[i] = swish(x[i]);
    }
}

torch::Tensor swish_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n / 4 + threads - 1) / threads + 1, 4096);
    swish_vec4_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

swish_cpp_source = "torch::Tensor swish_cuda(torch::Tensor x);"

swish = load_inline(
    name="swish_vec4",
    cpp_sources=swish_cpp_source,
    cuda_sources=swish_source,
    functions=["swish_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.swish = swish

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or not x.is_contiguous():
            return x * torch.sigmoid(x)
        return self.swish.swish_cuda(x)
