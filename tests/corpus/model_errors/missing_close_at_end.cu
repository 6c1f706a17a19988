// cutegen-corpus: at end of source: the kernel's closing brace was cut off with the rest of a reply
// expect-root: is never closed
#include <cuda_runtime.h>
#include <cutegen/abi.h>

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream);

__global__ void hardtanh_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, float lo, float hi) {  // BUG-ALT
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = fminf(fmaxf(x[i], lo), hi);
  }  // BUG
