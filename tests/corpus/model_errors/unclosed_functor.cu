// cutegen-corpus: structure: a device functor whose operator() lost its closing brace
// expect-root: is never closed
#include <cuda_runtime.h>
#include <cutegen/abi.h>

struct Softplus {
  float beta, threshold;
  __device__ float operator()(float x) const {  // BUG-ALT
    float bx = beta * x;
    return bx > threshold ? x : log1pf(__expf(bx)) / beta;  // BUG
};

template <class Op>
__global__ void map_kernel(const float* __restrict__ x, float* __restrict__ y, int n, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = op(x[i]);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int n = inputs[0].shape[0];
  map_kernel<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                                   static_cast<float*>(outputs[0].data), n, Softplus{1.f, 20.f});
  return cudaGetLastError();
}
