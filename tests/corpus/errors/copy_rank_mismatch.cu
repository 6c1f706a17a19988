// cutegen-corpus: register fragment built as a flat rank-1 tensor, then copied from a rank-3 (CPY,CPY_M,CPY_N) partition
// expect-root: CopyAtom rank-mismatch.
#include <cute/tensor.hpp>
using namespace cute;

template <class TiledCopy>
__global__ void scale_kernel(float const* in, float* out, int m, int n, float alpha, TiledCopy tiled_copy)
{
  auto tile = Shape<_64, _64>{};
  Tensor mIn  = make_tensor(make_gmem_ptr(in),  make_shape(m, n), make_stride(n, _1{}));
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(m, n), make_stride(n, _1{}));
  Tensor gIn  = local_tile(mIn,  tile, make_coord(blockIdx.x, blockIdx.y));
  Tensor gOut = local_tile(mOut, tile, make_coord(blockIdx.x, blockIdx.y));

  auto thr_copy = tiled_copy.get_slice(threadIdx.x);
  Tensor tIgIn  = thr_copy.partition_S(gIn);   // (CPY,CPY_M,CPY_N)
  Tensor tOgOut = thr_copy.partition_D(gOut);  // (CPY,CPY_M,CPY_N)

  Tensor tIrIn = make_tensor<float>(size(tIgIn));  // BUG
  copy(tiled_copy, tIgIn, tIrIn);  // BUG-ALT
  for (int i = 0; i < size(tIrIn); ++i) {
    tIrIn(i) *= alpha;
  }
  copy(tiled_copy, tIrIn, tOgOut);
}

void launch_scale(float const* in, float* out, int m, int n, float alpha, cudaStream_t stream)
{
  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                    Layout<Shape<_16, _16>, Stride<_16, _1>>{},
                                    Layout<Shape<_1, _4>>{});
  dim3 grid(m / 64, n / 64);
  scale_kernel<<<grid, 256, 0, stream>>>(in, out, m, n, alpha, tiled_copy);
}
