// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- BUG: "illegal address". A correct softsign, except that one thread also
// stores far past the end of the output: y[n + 2^38], i.e. 1 TiB beyond the allocation. (The
// brief's y[n + 2^30] is only 4 GiB past the end; with several 6.4 GB tensors of the KernelBench
// softsign live, that can land inside another allocation and silently corrupt it instead of
// faulting. 1 TiB past any allocation on a 141 GB GPU is unmapped.) The kernel must fail with
// cudaErrorIllegalAddress (an asynchronous error that poisons the CUDA context); the harness
// must report it, not hang or crash.
#include <cutegen/abi.h>

namespace {

constexpr int64_t kFar = int64_t(1) << 38;  // elements (x 4 bytes = 1 TiB)

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) y[n + kFar] = 1.0f;  // the bug
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (n == 0 || cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  softsign_kernel<<<4096, 256, 0, stream>>>(cutegen_data<const float>(inputs[0]),
                                            cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
