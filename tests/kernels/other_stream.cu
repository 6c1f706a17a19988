// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- CHEAT: "work on another stream". Ignores the `stream` argument: enqueues a
// ~20 ms busy-wait kernel followed by a correct softsign on its own non-blocking stream, and
// returns without synchronizing. Timed on the harness's stream this looks nearly free, and a
// harness that only synchronizes its own stream reads the output before it is written (still
// poisoned). Verdict: result-not-ready (its stream never waits for the caller's either, but after
// 20 ms the inputs are long written; tests/kernels/adversarial/unordered_both_ways.cu shows both).
#include <cutegen/abi.h>

namespace {

constexpr unsigned long long kDelayNs = 20ull * 1000 * 1000;  // ~20 ms

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread spinning ~20 ms (wall clock via %globaltimer; clock64 with the SM clock rate would
// also do, but %globaltimer does not depend on the clock frequency).
__global__ void delay_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
    // asm volatile timer reads: the loop cannot be optimized away
  }
}

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  (void)stream;  // the cheat: deliberately not used
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (n == 0 || cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;

  static cudaStream_t own = nullptr;  // created once, never destroyed (lives for the process)
  if (own == nullptr) {
    cudaError_t err = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    if (err != cudaSuccess) return (int)err;
  }
  delay_kernel<<<1, 1, 0, own>>>(kDelayNs);
  softsign_kernel<<<4096, 256, 0, own>>>(cutegen_data<const float>(inputs[0]),
                                         cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();  // no synchronization
}
