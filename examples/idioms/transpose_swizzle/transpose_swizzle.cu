// transpose_swizzle.cu -- y = x.T (contiguous), fp32 (idiom: a swizzled shared-memory layout).
// Problem: x is 8192 x 4096 (not square, so a swapped index shows up), y is 4096 x 8192.
//
//  * A CTA moves one 32 x 32 tile: 32 x 8 threads, coalesced row reads of x into shared memory,
//    then coalesced row writes of y that read the shared tile by COLUMN.
//  * The shared tile is composition(Swizzle<5,0,5>, (32,32):(32,1)): element (r,c) lives at
//    r*32 + (c XOR r). A column read (r = 0..31, fixed c) then hits 32 different banks, while row
//    writes stay conflict free. Without the swizzle every column read is a 32-way bank conflict; the
//    classic fix is padding (32 x 33), which wastes memory and breaks 128-bit access alignment.
//  * Bounds are checked per element, so any (M, N) works.
#include <cutegen/abi.h>

#include <cute/tensor.hpp>

namespace transpose_impl {

using namespace cute;

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // blockDim = (32, 8)

using SmemLayout = decltype(composition(Swizzle<5, 0, 5>{}, Layout<Shape<_32, _32>, Stride<_32, _1>>{}));

__global__ void __launch_bounds__(kTile * kRowsPerPass)
transpose_kernel(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float smem[cosize_v<SmemLayout>];
  Tensor sT = make_tensor(make_smem_ptr(smem), SmemLayout{});  // (32,32), swizzled

  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(M, N), make_stride(N, Int<1>{}));  // (M,N)
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(N, M), make_stride(M, Int<1>{}));  // (N,M)
  const int bm = blockIdx.y, bn = blockIdx.x;
  Tensor gX = local_tile(mX, Shape<_32, _32>{}, make_coord(bm, bn));  // x[bm*32.., bn*32..]
  Tensor gY = local_tile(mY, Shape<_32, _32>{}, make_coord(bn, bm));  // y[bn*32.., bm*32..]

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = bm * kTile, col0 = bn * kTile;
  CUTE_UNROLL
  for (int r = ty; r < kTile; r += kRowsPerPass) {
    if (row0 + r < M && col0 + tx < N) sT(r, tx) = gX(r, tx);  // row read: coalesced
  }
  __syncthreads();
  CUTE_UNROLL
  for (int c = ty; c < kTile; c += kRowsPerPass) {
    if (col0 + c < N && row0 + tx < M) gY(c, tx) = sT(tx, c);  // column read of smem: conflict free
  }
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

}  // namespace transpose_impl

using namespace transpose_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& in = inputs[0];
  const DLTensor& out = outputs[0];
  if (!is_f32(in) || !is_f32(out) || in.ndim != 2 || out.ndim != 2) return cudaErrorInvalidValue;
  const int64_t M = in.shape[0], N = in.shape[1];
  if (out.shape[0] != N || out.shape[1] != M) return cudaErrorInvalidValue;
  if (M == 0 || N == 0) return (int)cudaGetLastError();
  if (M * N > 0x7fffffff || (M + kTile - 1) / kTile > 65535) return cudaErrorInvalidValue;
  dim3 grid(unsigned((N + kTile - 1) / kTile), unsigned((M + kTile - 1) / kTile));
  dim3 block(kTile, kRowsPerPass);
  transpose_kernel<<<grid, block, 0, stream>>>(cutegen_data<const float>(in), cutegen_data<float>(out),
                                               int(M), int(N));
  return (int)cudaGetLastError();
}
