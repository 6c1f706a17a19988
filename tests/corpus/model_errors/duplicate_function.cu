// cutegen-corpus: structure: a reply repeated the whole device helper (old and new version)
// expect-root: has already been defined
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__device__ __forceinline__ float sigmoidf(float x) {
  return 1.f / (1.f + __expf(-x));
}

__device__ __forceinline__ float sigmoidf(float x) {  // BUG
  return __frcp_rn(1.f + __expf(-x));
}

__global__ void silu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * sigmoidf(x[i]);
}
