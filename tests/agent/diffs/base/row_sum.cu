// corpus: per-thread register accumulator sized with a runtime int instead of a static Int<>
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int rows, int cols, int cols_per_thread)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  int row = blockIdx.x;
  Tensor gRow = mX(row, _);  // (cols)

  // the accumulator
  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));
  clear(rAcc);
  for (int j = 0; j < size(rAcc); ++j) {
    int col = threadIdx.x * size(rAcc) + j;
    if (col < cols) rAcc(j) = gRow(col);
  }
  float s = 0.f;
  for (int j = 0; j < size(rAcc); ++j) s += rAcc(j);
  if (threadIdx.x == 0) out[row] = s;
}
