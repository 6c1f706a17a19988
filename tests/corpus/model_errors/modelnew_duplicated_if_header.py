# KernelBench level 1 #20 (LeakyReLU) as a ModelNew, dispatched over float and double.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

leaky_relu_source = """
// cutegen-corpus: structure: a patch pasted a guard `if (...) {` twice inside the AT_DISPATCH_FLOATING_TYPES lambda
// expect-root: line repeated
#include <torch/extension.h>

template <typename scalar_t>
__global__ void leaky_relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, scalar_t slope,
                                  int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        scalar_t v = x[i];
        y[i] = v > scalar_t(0) ? v : v * slope;
    }
}

torch::Tensor leaky_relu_cuda(torch::Tensor x, double negative_slope) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "leaky_relu_cuda", [&] {
        if (n > 0) {  // BUG
        if (n > 0) {  // BUG-ALT
            leaky_relu_kernel<scalar_t><<<blocks, threads>>>(
                x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), static_cast<scalar_t>(negative_slope), n);
        }
    });
    return y;
}
"""

leaky_relu_cpp_source = "torch::Tensor leaky_relu_cuda(torch::Tensor x, double negative_slope);"

leaky_relu = load_inline(
    name="leaky_relu",
    cpp_sources=leaky_relu_cpp_source,
    cuda_sources=leaky_relu_source,
    functions=["leaky_relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope
        self.ext = leaky_relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.leaky_relu_cuda(x.contiguous(), self.negative_slope)
