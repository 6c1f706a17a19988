// cutegen: problem=softsign_ref.py
// Adversarial -- work unordered with the caller's stream both ways (expect other-stream). One kernel on
// a stream of its own, no event either way: it reads its inputs as soon as it starts (before the
// caller has written them), holds them while it "computes" for ~2 ms, and writes the result after the
// caller has already read the outputs.
#include <cutegen/abi.h>

namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void read_then_write_late(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                                     unsigned long long ns) {
  // A grid that covers n: every thread loads its element first.
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const float v = i < n ? x[i] : 0.f;
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  if (i < n) y[i] = v / (1.0f + fabsf(v));
}

cudaStream_t own = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  (void)stream;
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (own == nullptr && cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess) return cudaErrorUnknown;
  const int64_t n = cutegen_numel(inputs[0]);
  const unsigned blocks = unsigned((n + 255) / 256);
  read_then_write_late<<<blocks, 256, 0, own>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                                n, 2000000ull);
  return (int)cudaGetLastError();
}
