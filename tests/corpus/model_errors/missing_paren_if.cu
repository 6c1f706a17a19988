// cutegen-corpus: structure: a rewritten condition lost its closing parenthesis
// expect-root: expected a ")"
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void leaky_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n, float slope) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if ((i < n) {  // BUG
    float v = x[i];
    y[i] = v > 0.f ? v : slope * v;
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  leaky_relu_kernel<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                          static_cast<float*>(outputs[0].data), n, 0.01f);
  return cudaGetLastError();
}
