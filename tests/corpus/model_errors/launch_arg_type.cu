// cutegen-corpus: overload: a kernel template launched with an int* where its parameter is const float*
// expect-root: argument #2
#include <cuda_runtime.h>
#include <cutegen/abi.h>

template <int BM, int BN>
__global__ void axpy_tile(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,  // BUG-ALT
                          int n, float alpha) {
  int i = blockIdx.x * BM + threadIdx.x;
  if (i < n) c[i] = alpha * a[i] + b[i];
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  const float* a = static_cast<const float*>(inputs[0].data);
  const int* b = static_cast<const int*>(inputs[1].data);
  float* c = static_cast<float*>(outputs[0].data);
  axpy_tile<128, 1><<<(n + 127) / 128, 128, 0, stream>>>(a, b, c, n, 2.f);  // BUG
  return cudaGetLastError();
}
