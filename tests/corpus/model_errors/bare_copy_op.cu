// cutegen-corpus: cute static_assert: a bare cp.async copy op given to copy() where a Copy_Atom was needed
// expect-root: CopyPolicy = SM80_CP_ASYNC_CACHEALWAYS<float, float>
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

__global__ void stage_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float smem[128];
  Tensor gX = make_tensor(make_gmem_ptr(x + blockIdx.x * 128), make_shape(Int<128>{}));
  Tensor sX = make_tensor(make_smem_ptr(smem), make_shape(Int<128>{}));
  Tensor tXgX = local_partition(gX, Layout<Shape<_32>>{}, threadIdx.x);
  Tensor tXsX = local_partition(sX, Layout<Shape<_32>>{}, threadIdx.x);
  copy(SM80_CP_ASYNC_CACHEALWAYS<float, float>{}, tXgX, tXsX);  // BUG
  cp_async_fence();
  cp_async_wait<0>();
  __syncthreads();
  y[blockIdx.x * 128 + threadIdx.x] = smem[threadIdx.x];
}
