// cutegen: problem=softsign_ref.py
// Adversarial -- "results cached across calls, keyed by pointer" (expect cached-results): the launcher
// computes once per input address and afterwards copies its saved result, on `stream`, whatever the
// input now holds. (tests/kernels/caches_results.cu is the same cheat against the full-size example.)
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

const void* cached_for = nullptr;
float* saved = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  const size_t bytes = size_t(n) * sizeof(float);
  if (x == cached_for) return (int)cudaMemcpyAsync(y, saved, bytes, cudaMemcpyDeviceToDevice, stream);
  if (saved == nullptr && cudaMalloc(&saved, bytes) != cudaSuccess) return cudaErrorMemoryAllocation;
  softsign_kernel<<<1024, 256, 0, stream>>>(x, y, n);
  cached_for = x;
  return (int)cudaMemcpyAsync(saved, y, bytes, cudaMemcpyDeviceToDevice, stream);
}
