// cutegen-corpus: overload: cute::gemm called without the accumulator tensor
// expect-root: the closest candidate takes 4
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

__global__ void mma_tile_kernel(const half_t* A, const half_t* B, float* C) {
  TiledMMA mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{});
  Tensor sA = make_tensor(make_gmem_ptr(A), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));
  Tensor sB = make_tensor(make_gmem_ptr(B), make_layout(make_shape(_64{}, _32{}), LayoutRight{}));
  Tensor gC = make_tensor(make_gmem_ptr(C), make_layout(make_shape(_64{}, _64{}), LayoutRight{}));
  auto thr = mma.get_slice(threadIdx.x);
  Tensor tCrA = thr.partition_fragment_A(sA);
  Tensor tCrB = thr.partition_fragment_B(sB);
  Tensor tCrC = thr.partition_fragment_C(gC);
  clear(tCrC);
  gemm(mma, tCrA, tCrB);  // BUG
  copy(tCrC, thr.partition_C(gC));
}
