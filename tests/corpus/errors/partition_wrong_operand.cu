// cutegen-corpus: copy-paste slip: the B register fragment is made from the A smem partition (tCsA) instead of tCsB
// expect-root: size<0>(btensor) == size<1>(LayoutB_TV{})
#include <cute/tensor.hpp>
using namespace cute;

__global__ void mma_tile_kernel(half_t const* A, half_t const* B, float* C)
{
  auto tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{});

  __shared__ half_t smemA[64 * 32];
  __shared__ half_t smemB[64 * 32];
  Tensor sA = make_tensor(make_smem_ptr(smemA), make_layout(Shape<_64, _32>{}, LayoutRight{}));  // (BM,BK)
  Tensor sB = make_tensor(make_smem_ptr(smemB), make_layout(Shape<_64, _32>{}, LayoutRight{}));  // (BN,BK)
  Tensor gC = make_tensor(make_gmem_ptr(C), make_layout(Shape<_64, _64>{}, LayoutRight{}));      // (BM,BN)
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
    smemA[i] = A[i];
    smemB[i] = B[i];
  }
  __syncthreads();

  auto thr_mma = tiled_mma.get_thread_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K)
  Tensor tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)

  Tensor tCrA = thr_mma.make_fragment_A(tCsA);
  Tensor tCrB = thr_mma.make_fragment_B(tCsA);  // BUG
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  copy(tCsA, tCrA);
  copy(tCsB, tCrB);
  gemm(tiled_mma, tCrA, tCrB, tCrC);
  copy(tCrC, tCgC);
}
