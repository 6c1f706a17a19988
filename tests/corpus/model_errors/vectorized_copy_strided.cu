// cutegen-corpus: cute static_assert: a 128-bit copy atom applied to a thread tile whose 4 values are a row stride apart
// expect-root: SrcLayout = (_4,_4):(int,_8)
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

// y = x * w[col] on a (rows, cols) row-major matrix; each thread owns 4 rows x 4 columns (columns 8 apart).
__global__ void col_scale_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                 int rows, int cols) {
  const int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
  const int c0 = blockIdx.x * 32 + threadIdx.x;
  if (r0 + 4 > rows || c0 + 24 >= cols) return;
  Tensor gX = make_tensor(make_gmem_ptr(x + r0 * cols + c0), make_shape(_4{}, _4{}), make_stride(cols, _8{}));
  Tensor gY = make_tensor(make_gmem_ptr(y + r0 * cols + c0), make_shape(_4{}, _4{}), make_stride(cols, _8{}));
  Tensor rX = make_tensor<float>(Shape<_4, _4>{});
  copy(Copy_Atom<UniversalCopy<uint128_t>, float>{}, gX, rX);  // BUG
  CUTE_UNROLL
  for (int j = 0; j < 4; ++j) {
    const float s = w[c0 + 8 * j];
    CUTE_UNROLL
    for (int i = 0; i < 4; ++i) rX(i, j) *= s;
  }
  copy(rX, gY);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  const int rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  dim3 block(8, 32), grid(cols / 32, rows / (4 * 32));
  col_scale_kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(inputs[0].data),
                                               static_cast<const float*>(inputs[1].data),
                                               static_cast<float*>(outputs[0].data), rows, cols);
  return cudaGetLastError();
}
