// cutegen-corpus: macro: a float pointer passed inside AT_DISPATCH_FLOATING_TYPES (wrong for the double instance)
// expect-root: argument #2 (float *) does not match parameter #2
#include <torch/extension.h>

template <typename scalar_t>
__global__ void selu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
  const scalar_t alpha = 1.6732632423543772, scale = 1.0507009873554805;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    scalar_t v = x[i];
    y[i] = scale * (v > 0 ? v : alpha * (exp(v) - 1));
  }
}

torch::Tensor selu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "selu_cuda", ([&] {
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    selu_kernel<scalar_t><<<blocks, threads>>>(
        x.data_ptr<scalar_t>(),
        y.data_ptr<float>(),  // BUG
        n);
  }));
  return y;
}
