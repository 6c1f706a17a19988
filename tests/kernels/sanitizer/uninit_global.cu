// cutegen: problem=copy_problem.py
// Sanitizer case -- BUG (initcheck): the kernel adds a scratch buffer the launcher allocated but never wrote.
// (The brief's case was an uninitialized *shared* read, but initcheck tracks global memory only: on the H200 it
// reported nothing for one; an uninitialized global read is the nearest bug compute-sanitizer can place.)
#include <cutegen/abi.h>

namespace uninit {

__global__ void add_kernel(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y,
                           int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] + bias[i];  // BUG: initcheck
}

}  // namespace uninit

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  static float* bias = nullptr;  // allocated once, never initialized: the bug
  static int64_t capacity = 0;
  if (capacity < n) {
    if (bias != nullptr) cudaFree(bias);
    if (cudaMalloc(&bias, n * sizeof(float)) != cudaSuccess) return (int)cudaGetLastError();
    capacity = n;
  }
  uninit::add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(cutegen_data<const float>(inputs[0]), bias,
                                                            cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
