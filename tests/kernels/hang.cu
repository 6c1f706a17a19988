// cutegen: problem=../../examples/softsign/softsign.py
// Integrity test -- BUG: "hang". The kernel waits on a device flag that nothing ever sets
// (a lost producer/consumer handshake), so it spins forever and the stream never completes.
// The launcher itself returns success immediately. The harness must time out and recover
// (e.g. kill the worker process), not wait forever.
#include <cutegen/abi.h>

namespace {

__device__ volatile int g_never_set = 0;

__global__ void hang_kernel(float* __restrict__ y) {
  while (g_never_set == 0) {
    __nanosleep(1000);  // still forever; just lighter on the SM
  }
  y[0] = 0.0f;  // unreachable in practice
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  hang_kernel<<<1, 32, 0, stream>>>(cutegen_data<float>(outputs[0]));
  return (int)cudaGetLastError();
}
