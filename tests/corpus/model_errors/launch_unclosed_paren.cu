// cutegen-corpus: structure: a multi-line kernel launch whose argument list lost its `)`
// expect-root: expected a ")"
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void abs_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fabsf(x[i]);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  abs_kernel<<<(n + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(inputs[0].data),
      static_cast<float*>(outputs[0].data),
      n;  // BUG
  return cudaGetLastError();
}
