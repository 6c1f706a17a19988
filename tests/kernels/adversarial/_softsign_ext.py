"""The one load_inline extension the adversarial ModelNew files here share (each file imports it; a process builds
and loads it once). Its entry points launch on PyTorch's current stream, as a KernelBench ModelNew's do; the
cheats are in how each ModelNew uses streams and what it returns. `delay_us` spins before the math, standing
for a kernel long enough that its caller would read an unfinished result."""

from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <bool kHalf>
__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, long long delay_ns) {
  if (delay_ns > 0 && threadIdx.x == 0) {
    const unsigned long long start = global_ns();
    while (global_ns() - start < (unsigned long long)delay_ns) {
    }
  }
  __syncthreads();
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    if (kHalf) {
      const __half v = __float2half(x[i]);
      y[i] = __half2float(__hdiv(v, __hadd(__float2half(1.0f), __habs(v))));
    } else {
      const float v = x[i];
      y[i] = v / (1.0f + fabsf(v));
    }
  }
}

void launch(torch::Tensor x, torch::Tensor out, int64_t rows, int64_t delay_us, bool half) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "x: contiguous fp32 CUDA");
  const int64_t n = rows < 0 ? x.numel() : rows * (x.dim() > 1 ? x.size(1) : 1);
  if (n == 0) return;
  auto stream = c10::cuda::getCurrentCUDAStream();
  if (half) {
    softsign_kernel<true><<<1024, 256, 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, delay_us * 1000);
  } else {
    softsign_kernel<false><<<1024, 256, 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, delay_us * 1000);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor softsign(torch::Tensor x, int64_t delay_us) {
  auto out = torch::empty_like(x);
  launch(x, out, -1, delay_us, false);
  return out;
}

torch::Tensor softsign_half(torch::Tensor x) {
  auto out = torch::empty_like(x);
  launch(x, out, -1, 0, true);
  return out;
}

// Writes only the first `rows` rows of `out` (the rest stays as allocated).
void softsign_rows(torch::Tensor x, torch::Tensor out, int64_t rows) { launch(x, out, rows, 0, false); }
"""

CPP = """
torch::Tensor softsign(torch::Tensor x, int64_t delay_us);
torch::Tensor softsign_half(torch::Tensor x);
void softsign_rows(torch::Tensor x, torch::Tensor out, int64_t rows);
"""

ext = load_inline(name="cutegen_adversarial_softsign", cpp_sources=CPP, cuda_sources=CUDA,
                  functions=["softsign", "softsign_half", "softsign_rows"], verbose=False)
