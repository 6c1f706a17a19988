// cutegen-corpus: 128-bit copy atom on half_t with a value layout of only 4 halves (64 bits) per thread
// expect-root: TiledCopy uses too few vals for selected CopyAtom
#include <cute/tensor.hpp>
using namespace cute;

__global__ void relu_half_kernel(half_t const* x, half_t* y, int m, int n)
{
  using Atom = Copy_Atom<UniversalCopy<uint128_t>, half_t>;
  auto tiled_copy = make_tiled_copy(Atom{},
                                    Layout<Shape<_32, _8>, Stride<_8, _1>>{},  // 256 threads
                                    Layout<Shape<_1, _4>>{});                  // BUG
  auto tile = Shape<_32, _32>{};

  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(m, n), make_stride(n, _1{}));
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(m, n), make_stride(n, _1{}));
  Tensor gX = local_tile(mX, tile, make_coord(blockIdx.x, blockIdx.y));
  Tensor gY = local_tile(mY, tile, make_coord(blockIdx.x, blockIdx.y));

  auto thr_copy = tiled_copy.get_thread_slice(threadIdx.x);
  Tensor tXgX = thr_copy.partition_S(gX);
  Tensor tYgY = thr_copy.partition_D(gY);
  Tensor tXrX = make_fragment_like(tXgX);

  copy(tiled_copy, tXgX, tXrX);
  CUTE_UNROLL
  for (int i = 0; i < size(tXrX); ++i) {
    tXrX(i) = tXrX(i) > half_t(0) ? tXrX(i) : half_t(0);
  }
  copy(tiled_copy, tXrX, tYgY);
}
