// cutegen-corpus: structure: an edit deleted the `{` of an if, leaving its `} else {` dangling
// expect-root: missing `{`
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void clamp_kernel(const float* __restrict__ x, float* __restrict__ y, int n, float lo, float hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  if (v < lo)  // BUG
    y[i] = lo;
  } else {  // BUG-ALT
    y[i] = fminf(v, hi);
  }
}
