// cutegen: problem=softsign_ref.py
// Adversarial -- "a lower-precision computation passing only at a looser tolerance" (expect mismatch):
// softsign computed in fp16 (loads converted to __half, the math in half, the result widened back).
// Twice as fast where the math is the bottleneck and within a 1e-2 tolerance; about 5e-4 off at fp32's
// 1e-4.
#include <cuda_fp16.h>
#include <cutegen/abi.h>

namespace {

__global__ void softsign_half(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const __half v = __float2half(x[i]);
    const __half one = __float2half(1.0f);
    y[i] = __half2float(__hdiv(v, __hadd(one, __habs(v))));
  }
}

}  // namespace

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  softsign_half<<<1024, 256, 0, stream>>>(cutegen_data<const float>(inputs[0]), cutegen_data<float>(outputs[0]),
                                          cutegen_numel(inputs[0]));
  return (int)cudaGetLastError();
}
