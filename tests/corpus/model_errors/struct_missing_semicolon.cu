// cutegen-corpus: structure: a params struct whose closing `};` lost its semicolon
// expect-root: expected a ";"
#include <cuda_runtime.h>
#include <cutegen/abi.h>

struct EluParams {
  float alpha;
  int n;
}  // BUG

__global__ void elu_kernel(const float* __restrict__ x, float* __restrict__ y, EluParams p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) {
    float v = x[i];
    y[i] = v > 0.f ? v : p.alpha * (__expf(v) - 1.f);
  }
}
