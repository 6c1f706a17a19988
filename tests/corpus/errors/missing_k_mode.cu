// cutegen-corpus: local_tile called with a concrete k coordinate (0) instead of _ so gA has no k-tile mode, but the code slices/iterates tAgA(_,_,_,k) as if it had one
// expect-root: Mismatched Ranks
#include <cute/tensor.hpp>
using namespace cute;

__global__ void sum_k_tiles_kernel(float const* A, float* out, int M, int K)
{
  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                    Layout<Shape<_32, _8>, Stride<_8, _1>>{},
                                    Layout<Shape<_1, _4>>{});
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));
  Tensor gA = local_tile(mA, Shape<_32, _32>{}, make_coord(blockIdx.x, 0));  // BUG

  auto thr = tiled_copy.get_slice(threadIdx.x);
  Tensor tAgA = thr.partition_S(gA);  // intended (CPY,CPY_M,CPY_K,k)
  Tensor tArA = make_fragment_like(tAgA(_, _, _, 0));  // BUG-ALT
  Tensor tAcc = make_fragment_like(tArA);
  clear(tAcc);

  for (int k = 0; k < size<3>(tAgA); ++k) {
    copy(tiled_copy, tAgA(_, _, _, k), tArA);
    for (int i = 0; i < size(tArA); ++i) {
      tAcc(i) += tArA(i);
    }
  }
  float s = 0.f;
  for (int i = 0; i < size(tAcc); ++i) {
    s += tAcc(i);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
