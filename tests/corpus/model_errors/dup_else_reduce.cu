// cutegen-corpus: structure: a patch duplicated `} else {` in a block reduction
// expect-root: a second `else` for one `if`
#include <cuda_runtime.h>
#include <cutegen/abi.h>

__global__ void row_max_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  __shared__ float smem[256];
  int row = blockIdx.x;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    m = fmaxf(m, x[row * cols + c]);
  }
  smem[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      smem[threadIdx.x] = fmaxf(smem[threadIdx.x], smem[threadIdx.x + s]);
    } else {  // BUG-ALT
    } else {  // BUG
      smem[threadIdx.x] = smem[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = smem[0];
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  int rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  row_max_kernel<<<rows, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                          static_cast<float*>(outputs[0].data), rows, cols);
  return cudaGetLastError();
}
