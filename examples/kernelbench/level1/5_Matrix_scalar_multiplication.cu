// 5_Matrix_scalar_multiplication.cu -- C = A * s, fp32 A of any shape, s a scalar (KernelBench L1 #5).
// In one line: CuTe TiledCopy stream (as the activations); the scalar read by the launcher from its 0-d host tensor.
//
// Design (memory-bound: 8 bytes moved per element; 65536 x 16384 = 8.6 GB -> 2.00 ms at 4.30 TB/s):
//  * The activations' streaming kernel (examples/softsign/softsign.cu, 94-98 % of the copy ceiling):
//    one 8192-float tile per CTA, 512 threads x 4 x 128-bit accesses as a CuTe TiledCopy
//    (UniversalCopy<uint128_t>), every load issued before the multiply, then every store.
//  * The scalar: get_inputs() returns a Python float. The harness hands a Python number to the ABI as a
//    0-d tensor in host memory (float64, what PyTorch itself wraps it as), so the launcher reads it and
//    passes it by value, rounded to fp32 as PyTorch's fp32 multiply does (bit-identical results).
//    A 1-element fp32 tensor in device memory is also accepted: then every thread loads it (one
//    broadcast load per warp), so the launcher never synchronizes.
//  * Partial last tile: predicated scalar loop; unaligned pointers: the scalar loop everywhere.
//
// Requirements (else cudaErrorInvalidValue): 2 inputs, 1 output; A and C fp32 with equal element
// counts; s one element: host fp64/fp32/int64 (a Python float or int), or device fp32.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 2.080 ms, 0.97x [0.95-0.98] eager, ~ 1 (0.89-1.12) torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include <cute/tensor.hpp>

namespace matscalar_impl {

using namespace cute;

constexpr int kThreads = 512;
constexpr int kVecElems = 4;      // floats per 128-bit access
constexpr int kVecPerThread = 4;  // 128-bit accesses per thread per tile
constexpr int kTileElems = kThreads * kVecElems * kVecPerThread;  // 8192 floats = 32 KB

// The scalar: a value from the host, or a pointer to one fp32 in device memory.
struct Scalar {
  float value;
  const float* device;  // non-null: read it here instead of `value`
  __device__ __forceinline__ float get() const { return device ? __ldg(device) : value; }
};

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
scale_kernel(const float* __restrict__ a, Scalar scalar, float* __restrict__ c, int64_t n) {
  const float s = scalar.get();
  Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(n));
  Tensor mC = make_tensor(make_gmem_ptr(c), make_shape(n));
  const int64_t tile = blockIdx.x;
  Tensor gA = local_tile(mA, Shape<Int<kTileElems>>{}, make_coord(tile));  // (kTileElems)
  Tensor gC = local_tile(mC, Shape<Int<kTileElems>>{}, make_coord(tile));
  const int64_t remaining = n - tile * kTileElems;

  if (kVectorized && remaining >= kTileElems) {
    auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                      Layout<Shape<Int<kThreads>>>{},    // thread layout
                                      Layout<Shape<Int<kVecElems>>>{});  // value layout
    auto thr_copy = tiled_copy.get_thread_slice(threadIdx.x);
    Tensor tAgA = thr_copy.partition_S(gA);  // (CPY=4, CPY_N=4)
    Tensor tCgC = thr_copy.partition_D(gC);
    Tensor frag = make_fragment_like(tAgA);
    copy(tiled_copy, tAgA, frag);  // all loads first ...
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) frag(i) *= s;
    copy(tiled_copy, frag, tCgC);  // ... then all stores
  } else {
    const int count = remaining < kTileElems ? int(remaining) : kTileElems;
#pragma unroll 4
    for (int i = threadIdx.x; i < count; i += kThreads) gC(i) = gA(i) * s;
  }
}

inline bool is_float(const DLTensor& t, int bits) {
  return t.dtype.code == kDLFloat && t.dtype.bits == bits && t.dtype.lanes == 1;
}

// The scalar input as a Scalar, or false if it is not one we can read without synchronizing.
inline bool read_scalar(const DLTensor& t, Scalar* out) {
  if (cutegen_numel(t) != 1) return false;
  if (t.device.device_type == kDLCPU && is_float(t, 64)) {
    *out = {float(*cutegen_data<const double>(t)), nullptr};
  } else if (t.device.device_type == kDLCPU && is_float(t, 32)) {
    *out = {*cutegen_data<const float>(t), nullptr};
  } else if (t.device.device_type == kDLCPU && t.dtype.code == kDLInt && t.dtype.bits == 64) {
    *out = {float(*cutegen_data<const int64_t>(t)), nullptr};  // a Python int
  } else if (t.device.device_type == kDLCUDA && is_float(t, 32)) {
    *out = {0.f, cutegen_data<const float>(t)};
  } else {
    return false;
  }
  return true;
}

}  // namespace matscalar_impl

using namespace matscalar_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& at = inputs[0];
  const DLTensor& ct = outputs[0];
  Scalar scalar;
  if (!is_float(at, 32) || !is_float(ct, 32) || !read_scalar(inputs[1], &scalar)) {
    return cudaErrorInvalidValue;
  }
  const int64_t n = cutegen_numel(at);
  if (cutegen_numel(ct) != n) return cudaErrorInvalidValue;
  if (n == 0) return (int)cudaGetLastError();

  const float* a = cutegen_data<const float>(at);
  float* c = cutegen_data<float>(ct);
  const int64_t tiles = (n + kTileElems - 1) / kTileElems;
  if (tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0;
  if (aligned) {
    scale_kernel<true><<<unsigned(tiles), kThreads, 0, stream>>>(a, scalar, c, n);
  } else {
    scale_kernel<false><<<unsigned(tiles), kThreads, 0, stream>>>(a, scalar, c, n);
  }
  return (int)cudaGetLastError();
}
