// A small CuTe kernel for the layout tests: one template instantiated twice, a swizzled smem tile.
#include <cute/tensor.hpp>

using namespace cute;

template <int kTile>
__global__ void scale(float* x, int n) {
  Tensor g = make_tensor(make_gmem_ptr(x), make_shape(n));
  Tensor tiles = zipped_divide(g, make_shape(Int<kTile>{}));
  auto layout = make_layout(make_shape(Int<kTile>{}, _4{}), LayoutRight{});
  __shared__ float buf[8 * 32];
  Tensor s = make_tensor(make_smem_ptr(buf), composition(Swizzle<3, 2, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}));
  if (threadIdx.x < size(layout)) s(threadIdx.x) = tiles(threadIdx.x, blockIdx.x) * 2.f;
}

template __global__ void scale<64>(float*, int);
template __global__ void scale<128>(float*, int);
