// cutegen: problem=../../examples/softsign_tail/softsign_tail.py
// Integrity test -- BUG: "drops the tail". A vectorized softsign (256 threads x float4 = 1024
// elements per CTA) whose grid is n / 1024 rounded DOWN and which has no remainder handling, so
// when n % 1024 != 0 the last partial tile is never written. Correct whenever n is a multiple
// of 1024 (e.g. the KernelBench size); on softsign_tail (n % 1024 == 296) the last 296 outputs
// keep the harness's poison. The harness must report them.
#include <cutegen/abi.h>

namespace {

constexpr int kThreads = 256;
constexpr int kTile = kThreads * 4;  // 1024 floats per CTA

__global__ void softsign_kernel(const float4* __restrict__ x, float4* __restrict__ y) {
  const int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x;  // float4 index
  const float4 v = x[i];
  float4 r;
  r.x = v.x / (1.0f + fabsf(v.x));
  r.y = v.y / (1.0f + fabsf(v.y));
  r.z = v.z / (1.0f + fabsf(v.z));
  r.w = v.w / (1.0f + fabsf(v.w));
  y[i] = r;
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  const int64_t full_tiles = n / kTile;  // the bug: should be (n + kTile - 1) / kTile + a tail path
  if (full_tiles == 0) return (int)cudaGetLastError();
  softsign_kernel<<<unsigned(full_tiles), kThreads, 0, stream>>>(
      cutegen_data<const float4>(inputs[0]), cutegen_data<float4>(outputs[0]));
  return (int)cudaGetLastError();
}
