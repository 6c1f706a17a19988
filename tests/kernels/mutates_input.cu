// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- BUG/CHEAT: "mutates its input". Computes softsign correctly into the output,
// but also overwrites the input tensor with the result (an in-place shortcut that corrupts the
// caller's data; a second call would compute softsign(softsign(x))). The output matches the
// reference on the first call; the harness must flag the modified input.
#include <cutegen/abi.h>

namespace {

__global__ void softsign_and_clobber_kernel(float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    const float r = v / (1.0f + fabsf(v));
    y[i] = r;
    x[i] = r;  // the bug: writes through the (logically read-only) input
  }
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (n == 0 || cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  softsign_and_clobber_kernel<<<4096, 256, 0, stream>>>(cutegen_data<float>(inputs[0]),
                                                        cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
