// cutegen-corpus: structure: a patch pasted the loop head a second time (old and new versions both kept)
// expect-root: is never closed
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void scale_bias_kernel(const float4* __restrict__ x, float4* __restrict__ y, int n4, float s, float b) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = tid; i < n4; i += gridDim.x * blockDim.x) {  // BUG
  for (int i = tid; i < n4; i += gridDim.x * blockDim.x) {  // BUG-ALT
    float4 v = x[i];
    v.x = v.x * s + b;
    v.y = v.y * s + b;
    v.z = v.z * s + b;
    v.w = v.w * s + b;
    y[i] = v;
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  scale_bias_kernel<<<512, 256, 0, stream>>>(static_cast<const float4*>(inputs[0].data),
                                             static_cast<float4*>(outputs[0].data), n / 4, 2.f, 1.f);
  return cudaGetLastError();
}
