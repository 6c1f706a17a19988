// cutegen-corpus: A register fragment partitioned from the whole multi-stage smem buffer (rank 4) instead of one stage, then passed to gemm with rank-3 B/C
// expect-root: no instance of overloaded function "cute::gemm" matches the argument list
#include <cute/tensor.hpp>
using namespace cute;

__global__ void mma_stage_kernel(half_t const* A, half_t const* B, float* C, int ldc)
{
  using TiledMma = decltype(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{}));
  TiledMma tiled_mma;

  __shared__ half_t smemA[64 * 32 * 2];
  __shared__ half_t smemB[64 * 32 * 2];
  Tensor sA = make_tensor(make_smem_ptr(smemA), make_layout(make_shape(_64{}, _32{}, _2{}), LayoutRight{}));  // (BM,BK,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smemB), make_layout(make_shape(_64{}, _32{}, _2{}), LayoutRight{}));  // (BN,BK,PIPE)
  Tensor gC = make_tensor(make_gmem_ptr(C), make_shape(_64{}, _64{}), make_stride(ldc, _1{}));

  for (int i = threadIdx.x; i < 64 * 32 * 2; i += blockDim.x) {
    smemA[i] = A[i];
    smemB[i] = B[i];
  }
  __syncthreads();

  auto thr_mma = tiled_mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA);            // BUG
  Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));   // (MMA,MMA_N,MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);                     // (MMA,MMA_M,MMA_N)
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  copy(thr_mma.partition_A(sA(_, _, 0)), tCrA);
  copy(thr_mma.partition_B(sB(_, _, 0)), tCrB);
  gemm(tiled_mma, tCrA, tCrB, tCrC);  // BUG-ALT
  copy(tCrC, tCgC);
}
