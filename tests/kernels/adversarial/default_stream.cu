// cutegen: problem=softsign_ref.py
// Adversarial -- the most common stream bug in model-written launchers: `kernel<<<grid, block>>>` without
// the stream argument, i.e. on the legacy default stream (expect inputs-not-awaited, or other-stream when
// a re-run also catches the caller reading its result unfinished). The caller's stream is a non-blocking
// one (as any stream a PyTorch program makes), so nothing orders the two: the kernel starts at once,
// before the inputs the caller has just queued are written.
#include <cutegen/abi.h>

namespace {

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v / (1.0f + fabsf(v));
  }
}

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  (void)stream;
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  softsign_kernel<<<1024, 256>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                 cutegen_numel(inputs[0]));
  return (int)cudaGetLastError();
}
