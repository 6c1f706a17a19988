// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- CHEAT: "zero output". Ignores the input and writes 0.0f to every output
// element (fast, well-formed, every element written, but wrong). The harness must report a
// numerical mismatch.
#include <cutegen/abi.h>

namespace {

__global__ void fill_kernel(float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    y[i] = 0.0f;
  }
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(outputs[0]);
  if (n == 0) return (int)cudaGetLastError();
  fill_kernel<<<4096, 256, 0, stream>>>(cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
