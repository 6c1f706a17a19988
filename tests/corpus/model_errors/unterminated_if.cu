// cutegen-corpus: structure: a pasted arch guard `#if` whose `#endif` was left out
// expect-root: unterminated #if
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cutegen/abi.h>

__global__ void tanh_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 800  // BUG
  if (i < n) y[i] = __float2bfloat16(tanhf(__bfloat162float(x[i])));
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  tanh_kernel<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(inputs[0].data),
                                                    static_cast<__nv_bfloat16*>(outputs[0].data), n);
  return cudaGetLastError();
}
