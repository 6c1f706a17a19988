// cutegen-corpus: macro: an undefined name inside the lambda given to AT_DISPATCH_FLOATING_TYPES
// expect-root: identifier "num_elements" is undefined
#include <torch/extension.h>

template <typename scalar_t>
__global__ void swish_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    scalar_t v = x[i];
    y[i] = v / (scalar_t(1) + exp(-v));
  }
}

torch::Tensor swish_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "swish_cuda", [&] {
    swish_kernel<scalar_t><<<blocks, threads>>>(
        x.data_ptr<scalar_t>(),
        y.data_ptr<scalar_t>(),
        num_elements);  // BUG
  });
  return y;
}
