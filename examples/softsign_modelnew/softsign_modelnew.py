# cutegen: problem=softsign_modelnew_ref.py
# KernelBench-style "ModelNew" submission (the format KernelBench agents emit): a CUDA softsign
# compiled with torch.utils.cpp_extension.load_inline, exposed through class ModelNew.
# Reference problem: softsign_modelnew_ref.py (same folder).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softsign_source = """
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t size) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx < size) {
        float v = x[idx];
        out[idx] = v / (1.0f + fabsf(v));
    }
}

torch::Tensor softsign_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto x_contig = x.contiguous();
    auto out = torch::empty_like(x_contig);
    int64_t size = x_contig.numel();
    if (size == 0) {
        return out;
    }

    const int block_size = 256;
    const int64_t num_blocks = (size + block_size - 1) / block_size;

    softsign_kernel<<<(unsigned int)num_blocks, block_size, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x_contig.data_ptr<float>(), out.data_ptr<float>(), size);
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    return out;
}
"""

softsign_cpp_source = "torch::Tensor softsign_cuda(torch::Tensor x);"

# Compile the inline CUDA code for softsign
softsign = load_inline(
    name="softsign",
    cpp_sources=softsign_cpp_source,
    cuda_sources=softsign_source,
    functions=["softsign_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    """
    Softsign activation computed by a custom CUDA kernel.
    """

    def __init__(self):
        super(ModelNew, self).__init__()
        self.softsign = softsign

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softsign.softsign_cuda(x)
