// cutegen: problem=softsign_ref.py
// Adversarial -- "result not ready at return" (expect result-not-ready). The launcher orders its stream
// after the caller's (the inputs are awaited), then does its work there -- a ~2 ms kernel, as a real one
// would be -- and returns without making the caller's stream wait for it: the caller reads the result
// before it is written.
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
cudaEvent_t inputs_ready = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (side == nullptr) {
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return cudaErrorUnknown;
    if (cudaEventCreateWithFlags(&inputs_ready, cudaEventDisableTiming) != cudaSuccess) return cudaErrorUnknown;
  }
  cudaEventRecord(inputs_ready, stream);
  cudaStreamWaitEvent(side, inputs_ready, 0);  // right: wait for the caller's inputs
  slow_softsign<<<1024, 256, 0, side>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                        cutegen_numel(inputs[0]), 2000000ull);
  return (int)cudaGetLastError();  // wrong: `stream` never waits for `side`
}
