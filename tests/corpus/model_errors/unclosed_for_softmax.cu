// cutegen-corpus: structure: a `for (...) {` whose closing brace a patch dropped
// expect-root: is never closed
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float* yr = y + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) {
    m = fmaxf(m, xr[c]);
  }
  float sum = 0.f;
  for (int c = 0; c < cols; ++c) {  // BUG-ALT
    float e = __expf(xr[c] - m);
    yr[c] = e;
    sum += e;  // BUG
  float inv = 1.f / sum;
  for (int c = 0; c < cols; ++c) {
    yr[c] *= inv;
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  softmax_kernel<<<(rows + 127) / 128, 128, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                        static_cast<float*>(outputs[0].data), rows, cols);
  return cudaGetLastError();
}
