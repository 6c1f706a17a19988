// cutegen-corpus: structure: an `if (...) {` tail guard left open in a CuTe copy kernel
// expect-root: is never closed
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n));
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n));
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {  // BUG-ALT
    float v = mX(i);
    mY(i) = v > 0.f ? v : 0.f;  // BUG
}

template <int kThreads>
void launch_relu(const float* x, float* y, int n, cudaStream_t stream) {
  relu_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(x, y, n);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  launch_relu<256>(static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n, stream);
  return cudaGetLastError();
}
