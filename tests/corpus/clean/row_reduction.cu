// cutegen-corpus: clean: row-wise sum of an (M,N) float matrix, one CTA (128 threads) per row, local_partition + warp shuffle + smem
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int m, int n)
{
  constexpr int kThreads = 128;
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(m, n), make_stride(n, _1{}));  // (M,N)
  Tensor mO = make_tensor(make_gmem_ptr(out), make_shape(m));                         // (M)
  int row = blockIdx.x;
  if (row >= m) return;

  Tensor gRow = mX(row, _);  // (N)
  float acc = 0.f;
  for (int j = threadIdx.x; j < size(gRow); j += kThreads) {
    acc += gRow(j);
  }

  CUTE_UNROLL
  for (int offset = 16; offset > 0; offset /= 2) {
    acc += __shfl_xor_sync(0xffffffff, acc, offset);
  }

  __shared__ float warp_sums[kThreads / 32];
  Tensor sW = make_tensor(make_smem_ptr(warp_sums), Layout<Int<kThreads / 32>>{});
  int warp = threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (lane == 0) {
    sW(warp) = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    CUTE_UNROLL
    for (int w = 0; w < size(sW); ++w) {
      total += sW(w);
    }
    mO(row) = total;
  }
}
