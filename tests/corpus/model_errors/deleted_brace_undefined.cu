// cutegen-corpus: structure: an edit deleted the `{` of a tail guard, so the value it declares dies with its first statement
// expect-root: missing `{`
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void hardtanh_kernel(const float* __restrict__ x, float* __restrict__ y, int n, float lo, float hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)  // BUG
    float v = x[i];
    y[i] = fminf(fmaxf(v, lo), hi);
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  hardtanh_kernel<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                       static_cast<float*>(outputs[0].data), n, -1.f, 1.f);
  return cudaGetLastError();
}
