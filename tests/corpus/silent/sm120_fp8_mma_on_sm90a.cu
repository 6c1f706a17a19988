// cutegen-corpus: RTX-50 (SM120) FP8 MMA atom SM120_16x8x32_TN<e4m3,e4m3,float> used in a kernel built for sm_90a (the project default): the atom's fma compiles to assert/printf/brkpt and traps at run time
// cutegen-arch: sm_90a
// expect-root: Attempting to use SM120_16x8x32_TN without CUTE_ARCH_F8F6F4_MMA_ENABLED
// expect-warning: without CUTE_ARCH_F8F6F4_MMA_ENABLED
// ptx-evidence: brkpt; call to __assertfail and vprintf with the string "Attempting to use SM120_16x8x32_TN without CUTE_ARCH_F8F6F4_MMA_ENABLED"; no mma.sync ... kind::f8f6f4 instruction
#include <cute/tensor.hpp>
using namespace cute;

__global__ void fp8_warp_mma_kernel(float_e4m3_t const* A, float_e4m3_t const* B, float* C)
{
  TiledMMA tiled_mma = make_tiled_mma(SM120_16x8x32_TN<float_e4m3_t, float_e4m3_t, float>{});  // BUG

  Tensor gA = make_tensor(make_gmem_ptr(A), make_layout(Shape<_16, _32>{}, LayoutRight{}));  // (M,K) K-major
  Tensor gB = make_tensor(make_gmem_ptr(B), make_layout(Shape<_8, _32>{}, LayoutRight{}));   // (N,K) K-major
  Tensor gC = make_tensor(make_gmem_ptr(C), make_layout(Shape<_16, _8>{}, LayoutRight{}));   // (M,N)

  auto thr_mma = tiled_mma.get_slice(threadIdx.x);
  Tensor tCgA = thr_mma.partition_A(gA);
  Tensor tCgB = thr_mma.partition_B(gB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrA = thr_mma.make_fragment_A(tCgA);
  Tensor tCrB = thr_mma.make_fragment_B(tCgB);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  copy(tCgA, tCrA);
  copy(tCgB, tCrB);
  gemm(tiled_mma, tCrA, tCrB, tCrC);
  copy(tCrC, tCgC);
}
