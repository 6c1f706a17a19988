// cutegen: problem=copy_problem.py
// Sanitizer case -- BUG (memcheck): the store has no tail guard. 4000 floats, 16 blocks of 256 threads: the
// last 96 threads write past the end of y.
#include <cutegen/abi.h>

namespace oob {

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const float v = i < n ? x[i] : 0.0f;
  y[i] = v;  // BUG: memcheck
}

}  // namespace oob

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  oob::copy_kernel<<<(n + 255) / 256, 256, 0, stream>>>(cutegen_data<const float>(inputs[0]),
                                                          cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
