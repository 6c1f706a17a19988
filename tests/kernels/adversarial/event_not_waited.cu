// cutegen: problem=softsign_ref.py
// Adversarial -- "an event recorded but not waited" (expect result-not-ready). The launcher does the
// ordering half right: its stream waits for the caller's, and it records `done` after its ~2 ms of work
// -- but nothing ever waits on `done` (the cudaStreamWaitEvent(stream, done) is missing), so the caller
// reads the outputs while they are still being written.
#include <cutegen/abi.h>

namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void slow_softsign(const float* __restrict__ x, float* __restrict__ y, int64_t n, unsigned long long ns) {
  if (threadIdx.x == 0) {
    const unsigned long long start = global_ns();
    while (global_ns() - start < ns) {
    }
  }
  __syncthreads();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

cudaStream_t side = nullptr;
cudaEvent_t ready = nullptr, done = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (side == nullptr) {
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return cudaErrorUnknown;
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  }
  cudaEventRecord(ready, stream);
  cudaStreamWaitEvent(side, ready, 0);
  slow_softsign<<<1024, 256, 0, side>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                        cutegen_numel(inputs[0]), 2000000ull);
  cudaEventRecord(done, side);  // recorded ... and never waited on
  return (int)cudaGetLastError();
}
