# KernelBench level 1 #23 (Softmax over dim=1) as a ModelNew: one CTA per row, a CuTe view of the row.
import os

import cutlass_library
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUTLASS_INCLUDE = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include")


def _launch_config(x: torch.Tensor) -> dict:
    cfg = {"threads": 256, "vec": 4}
    cfg["rows"], cfg["cols"] = x.shape
    return cfg


softmax_source = """
// cutegen-corpus: structure: a patch rewrote the inner loop of a row-softmax kernel template and dropped its `}`
// expect-root: is never closed
#include <torch/extension.h>
#include <cute/tensor.hpp>


template <int kThreads, int kVec>
__global__ void __launch_bounds__(kThreads)
softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    __shared__ float red[kThreads / 32];
    const int row = blockIdx.x;
    if (row >= rows) return;
    cute::Tensor gX = cute::make_tensor(cute::make_gmem_ptr(x + size_t(row) * cols), cute::make_shape(cols));
    cute::Tensor gY = cute::make_tensor(cute::make_gmem_ptr(y + size_t(row) * cols), cute::make_shape(cols));

    // 1) row max
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        m = fmaxf(m, gX(c));
    }
    for (int o = 16; o > 0; o /= 2) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    }
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < kThreads / 32; ++w) {
        m = fmaxf(m, red[w]);
    }
    __syncthreads();

    // 2) row sum of exp, kVec columns per step
    float s = 0.f;
    for (int c = threadIdx.x * kVec; c < cols; c += kThreads * kVec) {  // BUG-ALT
        CUTE_UNROLL
        for (int v = 0; v < kVec; ++v) {
            if (c + v < cols) {
                float e = __expf(gX(c + v) - m);
                gY(c + v) = e;
                s += e;
            }
        }  // BUG
    for (int o = 16; o > 0; o /= 2) {
        s += __shfl_xor_sync(0xffffffff, s, o);
    }
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
    __syncthreads();
    s = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) {
        s += red[w];
    }

    // 3) normalise
    const float inv = 1.f / s;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        gY(c) = gY(c) * inv;
    }
}

torch::Tensor softmax_cuda(torch::Tensor x, int64_t threads) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x must be a 2-D float32 tensor");
    auto y = torch::empty_like(x);
    const int rows = x.size(0), cols = x.size(1);
    TORCH_CHECK(threads == 256, "this build is for 256 threads");
    softmax_rows_kernel<256, 4><<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x, int64_t threads);"

softmax = load_inline(
    name="softmax_rows",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    extra_include_paths=[CUTLASS_INCLUDE],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = softmax

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cfg = _launch_config(x)
        return self.softmax.softmax_cuda(x.contiguous(), cfg["threads"])
