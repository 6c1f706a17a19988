// cutegen-corpus: bf16 operands staged in smem but the WGMMA atom is the fp16 one (SM90_64x64x16_F32F16F16_SS), so the A descriptor fragment has the wrong value type
// expect-root: Expecting ValTypeA type
#include <cute/tensor.hpp>
using namespace cute;

__global__ void wgmma_tile_kernel(bfloat16_t const* A, bfloat16_t const* B, float* C)
{
  using SmemLayoutA = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_64, _64>{}));
  using SmemLayoutB = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_64, _64>{}));
  __shared__ alignas(128) bfloat16_t smemA[cosize_v<SmemLayoutA>];
  __shared__ alignas(128) bfloat16_t smemB[cosize_v<SmemLayoutB>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), SmemLayoutA{});  // (BM,BK)
  Tensor sB = make_tensor(make_smem_ptr(smemB), SmemLayoutB{});  // (BN,BK)

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
  Tensor tCrA = thr_mma.partition_fragment_A(sA);  // BUG-ALT
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
