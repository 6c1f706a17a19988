// cutegen-corpus: structure: an edit left an extra `}` that closes the kernel early
// expect-root: extra `}`
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__device__ __forceinline__ float gelu_tanh(float x) {
  const float k0 = 0.7978845608f, k1 = 0.044715f;
  return 0.5f * x * (1.f + tanhf(k0 * (x + k1 * x * x * x)));
}

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (; i < n; i += stride) {
    float v = x[i];
    y[i] = gelu_tanh(v);
  }
  }  // BUG
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    y[0] = gelu_tanh(x[0]);
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  gelu_kernel<<<1024, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                         static_cast<float*>(outputs[0].data), n);
  return cudaGetLastError();
}
