// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- BUG: "wrong every 32nd element". A softsign whose store is guarded by an
// off-by-one lane test (`lane < 31` instead of `lane < 32`), so lane 31 of every warp never
// writes its element: every element with index % 32 == 31 keeps the harness's NaN poison. 1 in
// 32 outputs is wrong, deterministically (whatever the input values); the harness must report
// the mismatch and recognize the period-32 pattern.
#include <cutegen/abi.h>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int lane = threadIdx.x & 31;
  // One element per thread per step; the step is a multiple of 32, so lane == index % 32.
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * kThreads) {
    const float v = x[i];
    if (lane < 31) y[i] = v / (1.0f + fabsf(v));  // the bug: should be lane < 32
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
  softsign_kernel<<<4096, kThreads, 0, stream>>>(cutegen_data<const float>(inputs[0]),
                                                 cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
