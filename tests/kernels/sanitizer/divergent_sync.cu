// cutegen: problem=copy_problem.py
// Sanitizer case -- BUG (synccheck): the barrier is inside a branch on the data, so the threads of one warp
// disagree about reaching it (the inputs are signed random numbers).
#include <cutegen/abi.h>

namespace diverge {

constexpr int kThreads = 256;

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float tile[kThreads];
  const int t = threadIdx.x;
  const int64_t i = blockIdx.x * int64_t(kThreads) + t;
  const float v = i < n ? x[i] : 0.0f;
  tile[t] = v;
  if (v > 0.0f) {
    __syncthreads();  // BUG: synccheck
  }
  if (i < n) y[i] = tile[t];
}

}  // namespace diverge

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  diverge::copy_kernel<<<(n + diverge::kThreads - 1) / diverge::kThreads, diverge::kThreads, 0, stream>>>(
      cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
