// cutegen: problem=softsign_ref.py
// Adversarial -- "side stream without waiting for the caller's stream" (expect inputs-not-awaited).
// The launcher runs softsign on a stream of its own and makes the caller's stream wait for it afterwards
// (the result is ordered), but never makes its stream wait for the caller's: when the caller has just
// written the inputs on `stream`, this kernel reads them before they are there.
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

cudaStream_t side = nullptr;
cudaEvent_t done = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (side == nullptr) {
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return cudaErrorUnknown;
    if (cudaEventCreateWithFlags(&done, cudaEventDisableTiming) != cudaSuccess) return cudaErrorUnknown;
  }
  const int64_t n = cutegen_numel(inputs[0]);
  softsign_kernel<<<1024, 256, 0, side>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]), n);
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);  // the result is waited for; the inputs never were
  return (int)cudaGetLastError();
}
