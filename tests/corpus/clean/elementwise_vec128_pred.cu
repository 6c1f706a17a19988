// cutegen-corpus: clean: y = alpha*x + beta over an (M,N) half tensor, 128-bit vectorized TiledCopy, tail predicated with an identity tensor (requires N % 8 == 0)
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

template <class TiledCopy>
__global__ void axpb_kernel(half_t const* x, half_t* y, int m, int n, float alpha, float beta, TiledCopy tiled_copy)
{
  auto tile = Shape<_32, _64>{};
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(m, n), make_stride(n, _1{}));
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(m, n), make_stride(n, _1{}));
  Tensor cX = make_identity_tensor(shape(mX));  // (M,N) -> (m,n)

  auto coord = make_coord(blockIdx.x, blockIdx.y);
  Tensor gX = local_tile(mX, tile, coord);
  Tensor gY = local_tile(mY, tile, coord);
  Tensor gC = local_tile(cX, tile, coord);

  auto thr = tiled_copy.get_slice(threadIdx.x);
  Tensor tXgX = thr.partition_S(gX);  // (CPY,CPY_M,CPY_N)
  Tensor tYgY = thr.partition_D(gY);
  Tensor tXcX = thr.partition_S(gC);
  Tensor tXrX = make_fragment_like(tXgX);

  // Predicate per 128-bit vector: its first element is in bounds iff the whole vector is (N % 8 == 0).
  // (Explicit loop instead of copy_if(tiled_copy, pred, ...): CuTe's predicated Copy_Atom::call
  //  triggers warning #20013-D without --expt-relaxed-constexpr.)
  clear(tXrX);
  CUTE_UNROLL
  for (int i = 0; i < size<1>(tXrX); ++i) {
    CUTE_UNROLL
    for (int j = 0; j < size<2>(tXrX); ++j) {
      if (elem_less(tXcX(0, i, j), shape(mX))) {
        copy(tiled_copy, tXgX(_, i, j), tXrX(_, i, j));
      }
    }
  }
  CUTE_UNROLL
  for (int i = 0; i < size(tXrX); ++i) {
    tXrX(i) = half_t(alpha * float(tXrX(i)) + beta);
  }
  CUTE_UNROLL
  for (int i = 0; i < size<1>(tXrX); ++i) {
    CUTE_UNROLL
    for (int j = 0; j < size<2>(tXrX); ++j) {
      if (elem_less(tXcX(0, i, j), shape(mX))) {
        copy(tiled_copy, tXrX(_, i, j), tYgY(_, i, j));
      }
    }
  }
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs,
                                   DLTensor* outputs, int num_outputs, cudaStream_t stream)
{
  if (num_inputs < 1 || num_outputs < 1 || inputs[0].ndim != 2) return int(cudaErrorInvalidValue);
  int m = int(inputs[0].shape[0]);
  int n = int(inputs[0].shape[1]);
  if (n % 8 != 0) return int(cudaErrorInvalidValue);

  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                                    Layout<Shape<_32, _8>, Stride<_8, _1>>{},  // 256 threads
                                    Layout<Shape<_1, _8>>{});                  // 8 x 16b = 128b
  dim3 grid((m + 31) / 32, (n + 63) / 64);
  axpb_kernel<<<grid, 256, 0, stream>>>(cutegen_data<half_t>(inputs[0]), cutegen_data<half_t>(outputs[0]),
                                        m, n, 2.0f, 1.0f, tiled_copy);
  return int(cudaGetLastError());
}
