// cutegen-corpus: user helper gelu() defined without __device__ (host-only) and called inside the kernel's element loop
// expect-root: calling a __host__ function("gelu(float)") from a __global__ function
#include <cute/tensor.hpp>
#include <cmath>
using namespace cute;

inline float gelu(float x)  // BUG-ALT
{
  return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_kernel(float const* in, float* out, int n)
{
  Tensor mIn  = make_tensor(make_gmem_ptr(in),  make_shape(n));
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(n));
  Tensor gIn  = local_tile(mIn,  Shape<_1024>{}, make_coord(blockIdx.x));
  Tensor gOut = local_tile(mOut, Shape<_1024>{}, make_coord(blockIdx.x));
  Tensor tIgIn  = local_partition(gIn,  Layout<_256>{}, threadIdx.x);  // (4)
  Tensor tOgOut = local_partition(gOut, Layout<_256>{}, threadIdx.x);  // (4)

  int base = blockIdx.x * 1024 + threadIdx.x;
  CUTE_UNROLL
  for (int i = 0; i < size(tIgIn); ++i) {
    if (base + i * 256 < n) {
      tOgOut(i) = gelu(tIgIn(i));  // BUG
    }
  }
}
