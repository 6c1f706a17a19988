// cutegen-corpus: macro: a typo inside the lambda of a project-local dispatch macro
// expect-root: identifier "scale" is undefined
#include <cuda_runtime.h>
#include <cutegen/abi.h>

#define DISPATCH_FLOAT_HALF(IS_HALF, NAME, ...)                 \
  [&] {                                                         \
    if (IS_HALF) { using scalar_t = __half; return __VA_ARGS__(); } \
    using scalar_t = float;                                     \
    return __VA_ARGS__();                                       \
  }()

#include <cuda_fp16.h>

template <typename T>
__global__ void scale_kernel(const T* x, T* y, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(float(x[i]) * s);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  float factor = 0.5f;
  DISPATCH_FLOAT_HALF(inputs[0].dtype.bits == 16, "scale", [&] {
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    scale_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
        static_cast<const scalar_t*>(inputs[0].data), static_cast<scalar_t*>(outputs[0].data), n, scale);  // BUG
  });
  return cudaGetLastError();
}
