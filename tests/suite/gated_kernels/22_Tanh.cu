// Host-code stand-in for the suite's CPU tests (correct, fast): the launcher computes on the host.
#include <cutegen/abi.h>
#include <math.h>
#include <stdlib.h>

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  int64_t n = cutegen_numel(inputs[0]);
  for (int64_t i = 0; i < n; ++i) y[i] = tanhf(x[i]);
  return 0;
}
