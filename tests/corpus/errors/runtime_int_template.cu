// cutegen-corpus: kernel argument tile_n (runtime int) used as the template argument of Int<> in the CTA tiler
// expect-root: expression must have a constant value
#include <cute/tensor.hpp>
using namespace cute;

__global__ void add_bias_kernel(float* y, float const* bias, int m, int n, int tile_n)
{
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(m, n), make_stride(n, _1{}));
  Tensor mB = make_tensor(make_gmem_ptr(bias), make_shape(m, n), make_stride(_0{}, _1{}));  // broadcast over rows

  auto cta_tiler = make_shape(Int<32>{}, Int<tile_n>{});  // BUG
  Tensor gY = local_tile(mY, cta_tiler, make_coord(blockIdx.x, blockIdx.y));
  Tensor gB = local_tile(mB, cta_tiler, make_coord(blockIdx.x, blockIdx.y));

  for (int i = threadIdx.x; i < size(gY); i += blockDim.x) {
    gY(i) += gB(i);
  }
}
