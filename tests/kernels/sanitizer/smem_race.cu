// cutegen: problem=copy_problem.py
// Sanitizer case -- BUG (racecheck): each thread reads the shared slot its neighbour writes, with no
// __syncthreads() between the write and the read; the neighbour may be in another warp.
#include <cutegen/abi.h>

namespace race {

constexpr int kThreads = 256;

__global__ void shift_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float tile[kThreads];
  const int t = threadIdx.x;
  const int64_t i = blockIdx.x * int64_t(kThreads) + t;
  tile[t] = i < n ? x[i] : 0.0f;
  const float right = tile[(t + 1) % kThreads];  // BUG: racecheck
  if (i < n) y[i] = right;
}

}  // namespace race

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  race::shift_kernel<<<(n + race::kThreads - 1) / race::kThreads, race::kThreads, 0, stream>>>(
      cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
