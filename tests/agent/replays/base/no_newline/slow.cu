// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- CORRECT BUT SLOW (not a cheat): a softsign that is right for every n and
// every alignment but deliberately inefficient -- scalar 4-byte accesses, exactly one element
// per thread, 64-thread blocks (25 M blocks at the KernelBench size). It must pass verification
// and show a clearly lower bandwidth than examples/softsign/softsign.cu. kBlockThreads carries
// the `cutegen: tunable` marker so tuning tools can sweep it.
#include <cutegen/abi.h>

namespace {

constexpr int kBlockThreads = 64;  // cutegen: tunable

__global__ void __launch_bounds__(kBlockThreads)
softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(kBlockThreads) + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  if (n == 0) return (int)cudaGetLastError();
  const int64_t blocks = (n + kBlockThreads - 1) / kBlockThreads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  softsign_kernel<<<unsigned(blocks), kBlockThreads, 0, stream>>>(
      cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}