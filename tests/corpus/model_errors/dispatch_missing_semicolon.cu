// cutegen-corpus: macro: a missing `;` inside the lambda of AT_DISPATCH_FLOATING_TYPES_AND_HALF
// expect-root: expected a ";"
#include <torch/extension.h>

template <typename scalar_t>
__global__ void hardsigmoid_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = static_cast<float>(x[i]);
    y[i] = static_cast<scalar_t>(fminf(fmaxf(v / 6.f + 0.5f, 0.f), 1.f));
  }
}

torch::Tensor hardsigmoid_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "hardsigmoid_cuda", [&] {
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads  // BUG
    hardsigmoid_kernel<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
  });
  return y;
}
