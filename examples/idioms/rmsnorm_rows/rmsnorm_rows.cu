// rmsnorm_rows.cu -- y = x * rsqrt(mean(x^2, dim=-1) + eps) * w for a (rows, dim) fp32 tensor
// (idiom: a row reduction, the shape of softmax / layernorm / rmsnorm). Problem: 4096 x 8192.
//
//  * One CTA of 256 threads per row. The row is walked in chunks of 1024 floats with a 128-bit
//    TiledCopy (256 threads x 4 floats); a partial last chunk is predicated with an identity tensor.
//  * Pass 1: each thread accumulates its sum of squares in fp32; warp shuffle (xor) reduction, then the
//    8 warp partials go through shared memory and warp 0 reduces them; the result is broadcast.
//  * Pass 2: re-read x (the 32 KB row is still in L1/L2) and w, scale, store with 128-bit stores.
//    DRAM traffic stays at read x once + write y once (+ w, cached).
//  * dim % 4 != 0 or unaligned pointers: the same kernel with the predicated scalar path everywhere.
#include <cutegen/abi.h>

#include <cute/tensor.hpp>

namespace rmsnorm_impl {

using namespace cute;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = kThreads * 4;  // floats per step
constexpr float kEps = 1e-6f;

__device__ __forceinline__ float warp_sum(float v) {
  CUTE_UNROLL
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int64_t dim) {
  __shared__ float partial[kWarps];
  __shared__ float row_scale;
  const int64_t row = blockIdx.x;
  Tensor mX = make_tensor(make_gmem_ptr(x + row * dim), make_shape(dim));
  Tensor mY = make_tensor(make_gmem_ptr(y + row * dim), make_shape(dim));
  Tensor mW = make_tensor(make_gmem_ptr(w), make_shape(dim));
  Tensor cX = make_identity_tensor(shape(mX));

  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                    Layout<Shape<Int<kThreads>>>{}, Layout<Shape<_4>>{});
  auto thr = tiled_copy.get_thread_slice(threadIdx.x);
  const int64_t chunks = (dim + kChunk - 1) / kChunk;

  // Pass 1: sum of squares.
  float ss = 0.f;
  for (int64_t c = 0; c < chunks; ++c) {
    Tensor tX = thr.partition_S(local_tile(mX, Shape<Int<kChunk>>{}, make_coord(c)));  // (CPY=4,1)
    Tensor tC = thr.partition_S(local_tile(cX, Shape<Int<kChunk>>{}, make_coord(c)));
    Tensor r = make_fragment_like(tX);
    if (kVectorized && (c + 1) * kChunk <= dim) {
      copy(tiled_copy, tX, r);
    } else {
      CUTE_UNROLL
      for (int i = 0; i < size(r); ++i) r(i) = elem_less(tC(i), shape(mX)) ? tX(i) : 0.f;
    }
    CUTE_UNROLL
    for (int i = 0; i < size(r); ++i) ss += r(i) * r(i);
  }
  ss = warp_sum(ss);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < kWarps ? partial[threadIdx.x] : 0.f;
    v = warp_sum(v);
    if (threadIdx.x == 0) row_scale = rsqrtf(v / float(dim) + kEps);
  }
  __syncthreads();
  const float scale = row_scale;

  // Pass 2: y = x * scale * w.
  for (int64_t c = 0; c < chunks; ++c) {
    Tensor tX = thr.partition_S(local_tile(mX, Shape<Int<kChunk>>{}, make_coord(c)));
    Tensor tW = thr.partition_S(local_tile(mW, Shape<Int<kChunk>>{}, make_coord(c)));
    Tensor tY = thr.partition_D(local_tile(mY, Shape<Int<kChunk>>{}, make_coord(c)));
    Tensor tC = thr.partition_S(local_tile(cX, Shape<Int<kChunk>>{}, make_coord(c)));
    if (kVectorized && (c + 1) * kChunk <= dim) {
      Tensor rx = make_fragment_like(tX);
      Tensor rw = make_fragment_like(tW);
      copy(tiled_copy, tX, rx);
      copy(tiled_copy, tW, rw);
      CUTE_UNROLL
      for (int i = 0; i < size(rx); ++i) rx(i) = rx(i) * scale * rw(i);
      copy(tiled_copy, rx, tY);
    } else {
      CUTE_UNROLL
      for (int i = 0; i < size(tX); ++i) {
        if (elem_less(tC(i), shape(mX))) tY(i) = tX(i) * scale * tW(i);
      }
    }
  }
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

}  // namespace rmsnorm_impl

using namespace rmsnorm_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& xt = inputs[0];
  const DLTensor& wt = inputs[1];
  if (!is_f32(xt) || !is_f32(wt) || !is_f32(outputs[0]) || xt.ndim != 2) return cudaErrorInvalidValue;
  const int64_t rows = xt.shape[0], dim = xt.shape[1];
  if (cutegen_numel(wt) != dim || cutegen_numel(outputs[0]) != rows * dim) return cudaErrorInvalidValue;
  if (rows == 0 || dim == 0) return (int)cudaGetLastError();
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  const float* x = cutegen_data<const float>(xt);
  const float* w = cutegen_data<const float>(wt);
  float* y = cutegen_data<float>(outputs[0]);
  const bool vec = dim % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(w) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (vec) {
    rmsnorm_kernel<true><<<unsigned(rows), kThreads, 0, stream>>>(x, w, y, dim);
  } else {
    rmsnorm_kernel<false><<<unsigned(rows), kThreads, 0, stream>>>(x, w, y, dim);
  }
  return (int)cudaGetLastError();
}
