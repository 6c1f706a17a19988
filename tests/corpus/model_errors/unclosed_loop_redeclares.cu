// cutegen-corpus: structure: a patch dropped a loop's `}`, so the value declared after the loop now collides with the one inside it
// expect-root: is never closed
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void sq_then_bias_kernel(const float* __restrict__ x, float* __restrict__ y, int n, float b) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = gridDim.x * blockDim.x;
  for (int i = tid; i < n; i += stride) {  // BUG-ALT
    float v = x[i];
    y[i] = v * v;  // BUG
  float v = b;
  if (tid == 0) y[0] += v;
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  sq_then_bias_kernel<<<256, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                               static_cast<float*>(outputs[0].data), n, 1.f);
  return cudaGetLastError();
}
