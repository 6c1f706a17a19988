# KernelBench level 1 #31 (ELU) as a ModelNew.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

elu_source = '''
// cutegen-corpus: semantic: a rewrite of the launch misspelled the grid size it had just computed
// expect-root: did you mean `blocks`?
#include <torch/extension.h>

__global__ void elu_kernel(const float* __restrict__ x, float* __restrict__ y, float alpha, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.f ? v : alpha * (__expf(v) - 1.f);
    }
}

torch::Tensor elu_cuda(torch::Tensor x, double alpha) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    elu_kernel<<<blokcs, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)alpha, n);  // BUG
    return y;
}
'''

elu = load_inline(
    name="elu",
    cpp_sources="torch::Tensor elu_cuda(torch::Tensor x, double alpha);",
    cuda_sources=[elu_source],
    functions=["elu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    '''
    ELU through a custom CUDA kernel (alpha as in the reference; it's passed as a double).
    '''

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return elu.elu_cuda(x.contiguous(), self.alpha)
