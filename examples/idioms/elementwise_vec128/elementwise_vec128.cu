// elementwise_vec128.cu -- y = silu(x) = x * sigmoid(x), fp32, any shape (idiom: 128-bit TiledCopy with a
// predicated tail). Problem: 4096 x 16381 floats (67M elements, NOT a multiple of the tile: the last
// CTA's tile is partial, which is exactly what the predicate is for).
//
//  * One 4096-float tile per CTA: a TiledCopy of Copy_Atom<UniversalCopy<uint128_t>, float> with 256
//    threads x 4 contiguous floats; the tile repeats it 4 times, so each thread issues four 16-byte
//    loads (all before any math) and four 16-byte stores. A warp touches 512 contiguous bytes per access.
//  * Full tiles copy unpredicated. The partial last tile reuses the SAME partitioning on an identity
//    tensor (the coordinates of each element) and touches only elements with elem_less(coord, shape):
//    one scalar access per element, no out-of-bounds reads or writes.
//  * Not 16-byte aligned pointers (a view with an offset): every tile takes the predicated path.
//  * 64-bit sizes and offsets (KernelBench tensors exceed 2^31 bytes).
#include <cutegen/abi.h>

#include <cute/tensor.hpp>

namespace elementwise_vec128_impl {

using namespace cute;

constexpr int kThreads = 256;
constexpr int kTile = 4096;  // floats per CTA: 256 threads x 4 floats x 4 repeats

struct Silu {
  CUTE_HOST_DEVICE float operator()(float x) const { return x / (1.0f + expf(-x)); }
};

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
silu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n));  // (n)
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n));
  Tensor cX = make_identity_tensor(shape(mX));               // (n) -> coordinate

  Tensor gX = local_tile(mX, Shape<Int<kTile>>{}, make_coord(blockIdx.x));  // (kTile)
  Tensor gY = local_tile(mY, Shape<Int<kTile>>{}, make_coord(blockIdx.x));
  Tensor gC = local_tile(cX, Shape<Int<kTile>>{}, make_coord(blockIdx.x));

  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                    Layout<Shape<Int<kThreads>>>{},  // threads
                                    Layout<Shape<_4>>{});            // 4 floats = 128 bits each
  auto thr = tiled_copy.get_thread_slice(threadIdx.x);
  Tensor tXgX = thr.partition_S(gX);  // (CPY=4, CPY_N=4)
  Tensor tYgY = thr.partition_D(gY);
  Tensor tXcX = thr.partition_S(gC);  // the same elements' coordinates
  Tensor frag = make_fragment_like(tXgX);

  Silu op;
  const bool full = int64_t(blockIdx.x + 1) * kTile <= n;
  if (kVectorized && full) {
    copy(tiled_copy, tXgX, frag);  // 4 x 128-bit loads
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) frag(i) = op(frag(i));
    copy(tiled_copy, frag, tYgY);  // 4 x 128-bit stores
  } else {
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) {
      if (elem_less(tXcX(i), shape(mX))) tYgY(i) = op(tXgX(i));
    }
  }
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

}  // namespace elementwise_vec128_impl

using namespace elementwise_vec128_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  if (!is_f32(inputs[0]) || !is_f32(outputs[0])) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (cutegen_numel(outputs[0]) != n) return cudaErrorInvalidValue;
  if (n == 0) return (int)cudaGetLastError();
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  const int64_t tiles = (n + kTile - 1) / kTile;  // ceil: the partial tile gets a CTA too
  if (tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (aligned) {
    silu_kernel<true><<<unsigned(tiles), kThreads, 0, stream>>>(x, y, n);
  } else {
    silu_kernel<false><<<unsigned(tiles), kThreads, 0, stream>>>(x, y, n);
  }
  return (int)cudaGetLastError();
}
