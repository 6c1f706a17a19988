// cutegen-corpus: batched (B,M,N) tensor indexed with only two coordinates (row, col), forgetting the batch index
// expect-root: Mismatched Ranks
#include <cute/tensor.hpp>
using namespace cute;

__global__ void batched_transpose_kernel(float const* in, float* out, int batch, int m, int n)
{
  Tensor mIn  = make_tensor(make_gmem_ptr(in),  make_shape(batch, m, n), make_stride(m * n, n, _1{}));  // (B,M,N)
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(batch, n, m), make_stride(m * n, m, _1{}));  // (B,N,M)

  int b   = blockIdx.z;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch && row < m && col < n) {
    mOut(b, col, row) = mIn(row, col);  // BUG
  }
}
