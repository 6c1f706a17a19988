// cutegen-corpus: per-thread register accumulator sized with a runtime int (cols_per_thread) instead of a static Int<>
// expect-root: Dynamic owning tensors not supported
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int rows, int cols, int cols_per_thread)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  int row = blockIdx.x;
  Tensor gRow = mX(row, _);  // (cols)

  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));  // BUG
  clear(rAcc);

  for (int j = 0; j < cols_per_thread; ++j) {
    int col = threadIdx.x * cols_per_thread + j;
    if (col < cols) {
      rAcc(j) = gRow(col);
    }
  }

  float s = 0.f;
  for (int j = 0; j < size(rAcc); ++j) {
    s += rAcc(j);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    s += __shfl_xor_sync(0xffffffff, s, offset);
  }
  if (threadIdx.x == 0) {
    out[row] = s;
  }
}
