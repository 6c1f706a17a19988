// cutegen-corpus: cute static_assert: make_tensor on a raw register array instead of make_tensor<float>(shape)
// expect-root: Iterator = float [4]
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

__global__ void vec4_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_shape(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_shape(n));
  float frag[4];
  Tensor rX = make_tensor(frag, make_shape(Int<4>{}));  // BUG
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  for (int i = 0; i < 4; ++i) rX(i) = gX(base + i);
  for (int i = 0; i < 4; ++i) gY(base + i) = 2.f * rX(i);
}
