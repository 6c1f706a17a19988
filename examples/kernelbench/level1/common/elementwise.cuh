// elementwise.cuh -- y = op(x) over a dense fp32 tensor, for any functor `op` with
// `__device__ float operator()(float) const`. The KernelBench level-1 activations (19-32) are each
// a functor plus one call to kb_elementwise::forward.
//
// Design (memory-bound: 8 bytes moved per element, the math is free). It is the design of
// examples/softsign/softsign.cu, measured there at 94-98 % of the H200's 4.30 TB/s copy bandwidth:
//  * One 8192-element tile per CTA: 512 threads x 4 x 128-bit accesses. Each thread issues its
//    four 16-byte loads before any math, so 64 B/thread (32 KB/CTA) are in flight -- enough
//    outstanding traffic to cover DRAM latency.
//  * The accesses are a CuTe TiledCopy (Copy_Atom<UniversalCopy<uint128_t>, float>, 512 threads x
//    4 contiguous floats): a warp touches 512 contiguous bytes per instruction (fully coalesced).
//  * Full tiles take the unpredicated vector path; the one partial tile at the end runs a
//    predicated scalar loop, so any n >= 1 is handled.
//  * If either pointer is not 16-byte aligned, every tile takes the scalar path (still coalesced
//    4-byte accesses): misaligned views are correct, just slower.
//  * 64-bit element indices: the KernelBench size has 1.6e9 elements (6.4 GB per tensor).
// Requirements (else cudaErrorInvalidValue): one input and one output, both fp32, dense
// (row-major compact), with the same number of elements; at most 2^31-1 tiles (1.7e13 elements).
#pragma once

#include <cutegen/abi.h>

#include <cute/tensor.hpp>

#include "f32_tensor.cuh"

// A named namespace (not an anonymous one): nvcc's host stub cannot disambiguate an anonymous
// namespace from CuTe's own when `using namespace cute` is in effect.
namespace kb_elementwise {

using namespace cute;

constexpr int kThreads = 512;
constexpr int kVecElems = 4;      // floats per 128-bit access
constexpr int kVecPerThread = 4;  // 128-bit accesses per thread per tile
constexpr int kTileElems = kThreads * kVecElems * kVecPerThread;  // 8192 floats = 32 KB

template <class Op, bool kVectorized>
__global__ void __launch_bounds__(kThreads)
elementwise_kernel(Op op, const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n));  // (n)
  Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n));  // (n)
  const int64_t tile = blockIdx.x;
  Tensor gX = local_tile(mX, Shape<Int<kTileElems>>{}, make_coord(tile));  // (kTileElems)
  Tensor gY = local_tile(mY, Shape<Int<kTileElems>>{}, make_coord(tile));  // (kTileElems)
  const int64_t remaining = n - tile * kTileElems;

  if (kVectorized && remaining >= kTileElems) {
    // 512 threads x 4 contiguous floats per 128-bit access; the tile repeats it 4 times.
    auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                      Layout<Shape<Int<kThreads>>>{},    // thread layout
                                      Layout<Shape<Int<kVecElems>>>{});  // value layout
    auto thr_copy = tiled_copy.get_thread_slice(threadIdx.x);
    Tensor tXgX = thr_copy.partition_S(gX);  // (CPY=4, CPY_N=4)
    Tensor tYgY = thr_copy.partition_D(gY);  // (CPY=4, CPY_N=4)
    Tensor frag = make_fragment_like(tXgX);  // 16 floats in registers
    copy(tiled_copy, tXgX, frag);            // all loads first ...
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) frag(i) = op(frag(i));
    copy(tiled_copy, frag, tYgY);            // ... then all stores
  } else {
    // Partial last tile, or unaligned pointers: predicated scalar loop.
    const int count = remaining < kTileElems ? int(remaining) : kTileElems;
#pragma unroll 4
    for (int i = threadIdx.x; i < count; i += kThreads) gY(i) = op(gX(i));
  }
}

// The whole cutegen_forward of an elementwise activation: checks, then one launch on `stream`.
template <class Op>
int forward(Op op, const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
            cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& in = inputs[0];
  const DLTensor& out = outputs[0];
  if (!kb_tensor::is_dense_f32(in) || !kb_tensor::is_dense_f32(out)) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(in);
  if (cutegen_numel(out) != n) return cudaErrorInvalidValue;
  if (n == 0) return (int)cudaGetLastError();

  const float* x = cutegen_data<const float>(in);
  float* y = cutegen_data<float>(out);
  const int64_t tiles = (n + kTileElems - 1) / kTileElems;
  if (tiles > 0x7fffffff) return cudaErrorInvalidValue;

  const bool aligned = (reinterpret_cast<uintptr_t>(x) % 16 == 0) &&
                       (reinterpret_cast<uintptr_t>(y) % 16 == 0);
  if (aligned) {
    elementwise_kernel<Op, true><<<unsigned(tiles), kThreads, 0, stream>>>(op, x, y, n);
  } else {
    elementwise_kernel<Op, false><<<unsigned(tiles), kThreads, 0, stream>>>(op, x, y, n);
  }
  return (int)cudaGetLastError();
}

}  // namespace kb_elementwise
