// 4_Matrix_vector_multiplication_.cu -- y = A @ x, fp32, A (M, K), x (K, 1), y (M, 1) (KernelBench L1 #4).
// In one line: 4 rows per CTA share each 128-bit load of x; A streamed once (evict-first); compensated fp32 lanes, fp64 tree.
//
// Design (memory-bound: A is read once, 2048 x 1048576 fp32 = 8.59 GB -> 2.00 ms at 4.30 TB/s; x is
// 4 MB and stays in L2):
//  * A CTA of 256 threads owns 4 rows. Per step it loads 1024 floats of x (one 128-bit access per
//    thread, a CuTe TiledCopy) and the same 1024 columns of each of its 4 rows (a (4 x 1024) tile:
//    one 128-bit access per thread per row), then adds 16 products. Sharing x across 4 rows cuts x's L2
//    traffic to a quarter of A's. 80 B per thread in flight, ~80 KB per SM at 4 CTAs per SM. A is
//    loaded with the evict-first hint (ld.global.cs) so that it does not push x out of L2.
//  * Few rows (fewer than 2 CTAs per SM): K is split across a thread-block cluster of up to 8 CTAs;
//    each sums its K range and rank 0 adds the partial sums from the others' shared memory (DSMEM) in
//    rank order. At the KernelBench size (512 CTAs of 4 rows) no split is needed.
//  * Deterministic: every sum has a fixed order (no atomics). Accuracy: each thread keeps one
//    Kahan-compensated accumulator per row (its 4 lanes in order, 4 K / 1024 terms: 4096 at K = 2^20),
//    so its sum is accurate to a few ulps whatever K; the threads, warps and cluster ranks are then
//    added in float64. With signed (randn) inputs the old plain fp32 lanes were 3.6x the 1e-4 tolerance
//    from the fp64 product over 2048 rows (cuBLAS: 0.81x); a CPU model of the arithmetic
//    (bench/matvec_accuracy.py) gives the old kernel 3.8x and this one 0.25x (p90 over draws 0.47x).
//    Cost: 4 fp32 ops per product instead of 1 FFMA (~0.3 ms of issue slots under 2 ms of DRAM time);
//    40 registers (was 48: one accumulator pair per row instead of 4 lane accumulators).
//  * Partial tiles (M % 4, K % 1024) are predicated with an identity tensor; K % 4 != 0 or an unaligned
//    pointer takes the predicated path everywhere (correct, slower).
//
// Requirements (else cudaErrorInvalidValue): fp32; A 2-D (M, K) with unit column stride; x K
// contiguous elements; y M contiguous elements.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 1.957 ms, 1.19x [1.16-1.22] eager, 1.23x [1.16-1.28] torch.compile, 102% (memory) of its roofline
#include <cutegen/abi.h>

#include <cooperative_groups.h>

#include <cute/tensor.hpp>

namespace matvec_impl {

// A 128-bit global load with the streaming hint (ld.global.cs, evict-first): A is read exactly once, and
// 8.6 GB of A going through L2 under the default policy could push out x, which every CTA re-reads (a
// re-read of x from DRAM costs up to a quarter of A's traffic again). Set kStreamA = false to compare.
struct LoadStreaming128 {
  using SRegisters = cute::uint128_t[1];
  using DRegisters = cute::uint128_t[1];
  CUTE_HOST_DEVICE static void copy(cute::uint128_t const& src, cute::uint128_t& dst) {
#if defined(__CUDA_ARCH__)
    const float4 v = __ldcs(reinterpret_cast<const float4*>(&src));
    dst = reinterpret_cast<const cute::uint128_t&>(v);
#endif
  }
};
constexpr bool kStreamA = true;

}  // namespace matvec_impl

namespace cute {
template <>
struct Copy_Traits<matvec_impl::LoadStreaming128> : Copy_Traits<UniversalCopy<uint128_t>> {};
}  // namespace cute

namespace matvec_impl {

using namespace cute;
namespace cg = cooperative_groups;
using LoadA = conditional_t<kStreamA, LoadStreaming128, UniversalCopy<uint128_t>>;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 4;              // rows of A per CTA, sharing each chunk of x
constexpr int kChunk = kThreads * 4;  // columns per step: one 128-bit access per thread per row
constexpr int kMaxSplits = 8;         // CTAs per cluster along K (the portable cluster size)

__device__ __forceinline__ double warp_sum(double v) {
  CUTE_UNROLL
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// sum += a * x, compensated (Kahan): `c` holds what the float sum has gained over the exact one so far,
// and is taken off the next term, together with the exact product (one fmaf: a single rounding). nvcc
// keeps this order (IEEE float, no fast-math, no reassociation).
__device__ __forceinline__ void add_product(float a, float x, float& sum, float& c) {
  const float y = fmaf(a, x, -c);
  const float t = sum + y;
  c = (t - sum) - y;
  sum = t;
}

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
matvec_kernel(const float* __restrict__ a, int64_t lda, const float* __restrict__ x,
              float* __restrict__ y, int64_t m, int64_t k, int64_t k_per_split) {
  __shared__ double warp_part[kRows][kWarps];
  __shared__ double cta_part[kRows];
  Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(m, k), make_stride(lda, _1{}));  // (M, K)
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(k));                             // (K)
  Tensor cA = make_identity_tensor(shape(mA));                                          // (row, col)
  auto copy_a = make_tiled_copy(Copy_Atom<LoadA, float>{},
                                Layout<Shape<_1, Int<kThreads>>>{}, Layout<Shape<_1, _4>>{});
  auto copy_x = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                Layout<Shape<Int<kThreads>>>{}, Layout<Shape<_4>>{});
  auto thr_a = copy_a.get_thread_slice(threadIdx.x);
  auto thr_x = copy_x.get_thread_slice(threadIdx.x);
  const int64_t row_tile = blockIdx.x;
  const bool full_rows = (row_tile + 1) * kRows <= m;

  // This CTA's K range is whole chunks (k_per_split is a multiple of kChunk): [c_begin, c_end).
  const int64_t chunks_per_split = k_per_split / kChunk;
  const int64_t c_begin = int64_t(blockIdx.y) * chunks_per_split;
  const int64_t c_end = min(c_begin + chunks_per_split, (k + kChunk - 1) / kChunk);
  float acc[kRows] = {};   // one accumulator per row: a thread's 4 lanes go into it in order
  float comp[kRows] = {};  // its Kahan compensation
  for (int64_t c = c_begin; c < c_end; ++c) {
    auto tile = make_coord(row_tile, c);
    Tensor tAgA = thr_a.partition_S(local_tile(mA, Shape<Int<kRows>, Int<kChunk>>{}, tile));  // (4,kRows,1)
    Tensor tXgX = thr_x.partition_S(local_tile(mX, Shape<Int<kChunk>>{}, make_coord(c)));    // (4,1)
    Tensor rA = make_fragment_like(tAgA);
    Tensor rX = make_fragment_like(tXgX);
    if (kVectorized && full_rows && (c + 1) * kChunk <= k) {
      copy(copy_x, tXgX, rX);
      copy(copy_a, tAgA, rA);
    } else {  // predicated: out-of-range elements read as 0
      Tensor tAcA = thr_a.partition_S(local_tile(cA, Shape<Int<kRows>, Int<kChunk>>{}, tile));
      CUTE_UNROLL
      for (int i = 0; i < size(rA); ++i) rA(i) = elem_less(tAcA(i), shape(mA)) ? tAgA(i) : 0.f;
      CUTE_UNROLL
      for (int v = 0; v < size(rX); ++v) rX(v) = elem_less(get<1>(tAcA(v, 0, 0)), k) ? tXgX(v) : 0.f;
    }
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      CUTE_UNROLL
      for (int v = 0; v < 4; ++v) add_product(rA(v, r, 0), rX(v), acc[r], comp[r]);
    }
  }

  // CTA reduction in float64, fixed order: each thread's compensated sum, a warp shuffle tree, then the
  // 8 warps.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  CUTE_UNROLL
  for (int r = 0; r < kRows; ++r) {
    const double v = warp_sum(double(acc[r]) - double(comp[r]));
    if (lane == 0) warp_part[r][warp] = v;
  }
  __syncthreads();
  const int r = threadIdx.x;  // threads 0..kRows-1 finish one row each
  const int64_t row = row_tile * kRows + r;
  if (r < kRows) {
    double s = 0.0;
    CUTE_UNROLL
    for (int w = 0; w < kWarps; ++w) s += warp_part[r][w];
    cta_part[r] = s;
    if (gridDim.y == 1 && row < m) y[row] = float(s);
  }
  if (gridDim.y == 1) return;

  // Split K: rank 0 of the cluster adds every CTA's partial sums in rank order (DSMEM reads).
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every CTA's cta_part is written
  if (cluster.block_rank() == 0 && r < kRows && row < m) {
    double s = 0.0;
    for (unsigned q = 0; q < cluster.num_blocks(); ++q) s += cluster.map_shared_rank(cta_part, q)[r];
    y[row] = float(s);
  }
  cluster.sync();  // no CTA exits while rank 0 may still read its shared memory
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

// A tensor whose elements are `n` consecutive floats (any shape, e.g. (K, 1)).
inline bool is_vector(const DLTensor& t, int64_t n) {
  if (!is_f32(t) || cutegen_numel(t) != n) return false;
  int64_t expect = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

// K splits (= cluster size): 1 when there are enough row tiles to fill the GPU, else up to 8.
inline int choose_splits(int64_t row_tiles, int64_t chunks) {
  int device = 0, sms = 132;
  if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  int splits = 1;
  while (splits < kMaxSplits && row_tiles * splits < 2 * int64_t(sms) && chunks >= 2 * splits) splits *= 2;
  return splits;
}

template <bool kVectorized>
cudaError_t launch(const float* a, int64_t lda, const float* x, float* y, int64_t m, int64_t k,
                   cudaStream_t stream) {
  const int64_t row_tiles = (m + kRows - 1) / kRows;
  const int64_t chunks = (k + kChunk - 1) / kChunk;
  const int splits = choose_splits(row_tiles, chunks);  // a power of two; a last rank may get no chunk
  const int64_t k_per_split = (chunks + splits - 1) / splits * kChunk;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3{unsigned(row_tiles), unsigned(splits), 1};
  config.blockDim = dim3{kThreads, 1, 1};
  config.stream = stream;
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = unsigned(splits);
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = splits > 1 ? 1 : 0;
  return cudaLaunchKernelEx(&config, matvec_kernel<kVectorized>, a, lda, x, y, m, k, k_per_split);
}

}  // namespace matvec_impl

using namespace matvec_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& at = inputs[0];
  if (!is_f32(at) || at.ndim != 2 || at.strides[1] != 1 || at.strides[0] < at.shape[1]) {
    return cudaErrorInvalidValue;
  }
  const int64_t m = at.shape[0], k = at.shape[1], lda = at.strides[0];
  if (!is_vector(inputs[1], k) || !is_vector(outputs[0], m)) return cudaErrorInvalidValue;
  if ((m + kRows - 1) / kRows > 0x7fffffff) return cudaErrorInvalidValue;
  if (m == 0) return (int)cudaGetLastError();

  const float* a = cutegen_data<const float>(at);
  const float* x = cutegen_data<const float>(inputs[1]);
  float* y = cutegen_data<float>(outputs[0]);
  const bool vec = k % 4 == 0 && lda % 4 == 0 && reinterpret_cast<uintptr_t>(a) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const cudaError_t err = vec ? launch<true>(a, lda, x, y, m, k, stream) : launch<false>(a, lda, x, y, m, k, stream);
  return err != cudaSuccess ? (int)err : (int)cudaGetLastError();
}
