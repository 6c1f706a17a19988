// cutegen-corpus: std::max (a constexpr __host__ function) used in device code without --expt-relaxed-constexpr
// expect-root: calling a constexpr __host__ function("max")
#include <cute/tensor.hpp>
#include <algorithm>
using namespace cute;

__global__ void row_max_kernel(float const* x, float* out, int rows, int cols)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  Tensor gRow = mX(blockIdx.x, _);  // (cols)

  float m = -INFINITY;
  for (int j = threadIdx.x; j < size(gRow); j += 32) {
    m = std::max(m, gRow(j));  // BUG
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = m;
  }
}
