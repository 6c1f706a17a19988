// cutegen: problem=softsign_ref.py
// Adversarial -- "partial write" (expect mismatch): the grid covers only the first half of the output
// (an off-by-half in the grid size; the rest is left as it was). Whatever the output memory held before
// -- the harness's NaN poison here -- is returned for the second half.
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  const unsigned blocks = unsigned((n / 2 + 255) / 256);  // the bug: half the grid
  softsign_kernel<<<blocks, 256, 0, stream>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
