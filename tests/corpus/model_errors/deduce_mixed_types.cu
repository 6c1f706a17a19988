// cutegen-corpus: overload: a device helper template called with float and double pointers
// expect-root: failed deduction
#include <cuda_runtime.h>
#include <cutegen/abi.h>

template <typename T>
__device__ void store_tile(T* out, const T* in, int n) {
  for (int i = 0; i < n; ++i) out[i] = in[i];
}

__global__ void widen_kernel(float* __restrict__ y, const double* __restrict__ x, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (base + 8 <= n) {
    store_tile(y + base, x + base, 8);  // BUG
  }
}
