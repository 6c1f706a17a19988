// cutegen-corpus: WGMMA (SM90_64x64x16_F32F16F16_SS) kernel built for sm_90 instead of sm_90a: CUTE_ARCH_MMA_SM90A_ENABLED is off, so every wgmma becomes assert/printf/brkpt and the kernel traps at run time
// cutegen-arch: sm_90
// expect-root: Attempting to use MMA_64x64x16_F32F16F16_SS without CUTE_ARCH_MMA_SM90A_ENABLED
// expect-warning: without CUTE_ARCH_MMA_SM90A_ENABLED
// ptx-evidence: brkpt; call to __assertfail and vprintf with the string "Attempting to use MMA_64x64x16_F32F16F16_SS without CUTE_ARCH_MMA_SM90A_ENABLED" (also wgmma.fence / commit_group / wait_group variants); no wgmma.mma_async instruction
#include <cute/tensor.hpp>
using namespace cute;

__global__ void wgmma_tile_kernel(half_t const* A, half_t const* B, float* C)
{
  using SmemLayout = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64, _64>{}));
  __shared__ alignas(1024) half_t smemA[cosize_v<SmemLayout>];
  __shared__ alignas(1024) half_t smemB[cosize_v<SmemLayout>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), SmemLayout{});  // (BM,BK)
  Tensor sB = make_tensor(make_smem_ptr(smemB), SmemLayout{});  // (BN,BK)

  Tensor gA = make_tensor(make_gmem_ptr(A), Shape<_64, _64>{}, LayoutRight{});
  Tensor gB = make_tensor(make_gmem_ptr(B), Shape<_64, _64>{}, LayoutRight{});
  Tensor gC = make_tensor(make_gmem_ptr(C), Shape<_64, _64>{}, LayoutRight{});
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    sA(i) = gA(i);
    sB(i) = gB(i);
  }
  __syncthreads();

  auto tiled_mma = make_tiled_mma(SM90_64x64x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{});  // BUG
  auto thr_mma = tiled_mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA);
  Tensor tCrB = thr_mma.partition_fragment_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  warpgroup_fence_operand(tCrC);
  warpgroup_arrive();
  gemm(tiled_mma, tCrA, tCrB, tCrC);
  warpgroup_commit_batch();
  warpgroup_wait<0>();
  warpgroup_fence_operand(tCrC);

  copy(tCrC, tCgC);
}
