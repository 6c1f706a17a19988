// cutegen-corpus: user's constexpr helper round_up() is not marked __host__ __device__ and is called with runtime values in device code
// expect-root: calling a constexpr __host__ function("round_up") from a __device__ function
#include <cute/tensor.hpp>
using namespace cute;

constexpr int round_up(int x, int m) { return (x + m - 1) / m * m; }  // BUG-ALT

template <int kTile>
__device__ void zero_padded_tail(float* buf, int n)
{
  Tensor t = make_tensor(make_gmem_ptr(buf), make_shape(round_up(n, kTile)));  // BUG
  for (int i = n + threadIdx.x; i < size(t); i += blockDim.x) {
    t(i) = 0.f;
  }
}

__global__ void pad_kernel(float* buf, int n)
{
  zero_padded_tail<128>(buf, n);
}
