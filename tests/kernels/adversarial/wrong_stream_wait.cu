// cutegen: problem=softsign_ref.py
// Adversarial -- "waiting on the wrong stream" (expect inputs-not-awaited). The launcher orders its own
// stream after the legacy default stream (an event recorded on stream 0), assuming that is where the
// caller works; the caller's stream is another one, so its freshly written inputs are not waited for.
// The result is joined back to `stream` correctly.
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

cudaStream_t side = nullptr;
cudaEvent_t before = nullptr, done = nullptr;

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (side == nullptr) {
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return cudaErrorUnknown;
    cudaEventCreateWithFlags(&before, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  }
  cudaEventRecord(before, cudaStreamLegacy);  // the wrong stream: not the caller's
  cudaStreamWaitEvent(side, before, 0);
  softsign_kernel<<<1024, 256, 0, side>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                          cutegen_numel(inputs[0]));
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);
  return (int)cudaGetLastError();
}
