// cutegen-corpus: row-major (M,N) layout built with a one-mode stride (ld) instead of (ld, _1), so shape and stride are not congruent
// expect-root: Index out of range
#include <cute/tensor.hpp>
using namespace cute;

__global__ void fill_tile_kernel(float* out, int m, int n, int ld, float value)
{
  auto layout = make_layout(make_shape(m, n), make_stride(ld));  // BUG
  Tensor mOut = make_tensor(make_gmem_ptr(out), layout);                 // (M,N)
  Tensor gOut = local_tile(mOut, Shape<_32, _32>{}, make_coord(blockIdx.x, blockIdx.y));  // BUG-ALT
  Tensor tOgOut = local_partition(gOut, Layout<Shape<_8, _32>>{}, threadIdx.x);

  for (int i = 0; i < size(tOgOut); ++i) {
    tOgOut(i) = value;
  }
}
