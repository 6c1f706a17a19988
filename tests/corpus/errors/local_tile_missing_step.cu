// cutegen-corpus: local_tile of the (M,K) A matrix with the 3-mode (BM,BN,BK) GEMM tiler but without the Step<_1,X,_1> projection
// expect-root: logical_divide: Too many modes in tiler.
#include <cute/tensor.hpp>
using namespace cute;

__global__ void simple_gemm_kernel(float const* A, float const* B, float* C, int M, int N, int K)
{
  auto cta_tiler = make_shape(Int<64>{}, Int<64>{}, Int<8>{});  // (BM,BN,BK)
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);        // (m,n,k)

  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));  // (M,K)
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, _1{}));  // (N,K)
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, _1{}));  // (M,N)

  Tensor gA = local_tile(mA, cta_tiler, cta_coord);                     // BUG
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1,  X>{});  // (BM,BN)

  // one thread per output element of the 64x64 tile, 16x16 threads each doing 4x4
  Tensor tCgC = local_partition(gC, Layout<Shape<_16, _16>>{}, threadIdx.x);
  Tensor tCrC = make_fragment_like(tCgC);
  clear(tCrC);
  for (int k = 0; k < size<2>(gA); ++k) {
    for (int i = 0; i < size<0>(tCrC); ++i) {
      for (int j = 0; j < size<1>(tCrC); ++j) {
        for (int kk = 0; kk < 8; ++kk) {
          tCrC(i, j) += gA(threadIdx.x % 16 + i * 16, kk, k) * gB(threadIdx.x / 16 + j * 16, kk, k);
        }
      }
    }
  }
  copy(tCrC, tCgC);
}
