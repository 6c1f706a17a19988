// 12_Matmul_with_diagonal_matrices_.cu -- C = diag(A) @ B, i.e. C[i, j] = A[i] * B[i, j]
// In one line: row scale: B streamed once in 4x2048 CuTe tiles, the diagonal never built.
// (KernelBench L1 #12; fp32, A (N,), B and C (N, M)).
//
// Design (memory-bound: the N x N diagonal is never built, B is streamed once; at N = M = 4096 the
// compulsory traffic is 16 KB + 64 MB + 64 MB = 134 MB -> 31.2 us at 4.30 TB/s):
//  * One (4 rows x 2048 columns) tile of B per CTA: a CuTe TiledCopy of 512 threads x 4 contiguous
//    floats (UniversalCopy<uint128_t>) covers 2048 columns of one row; the tile repeats it over its
//    4 rows, so each thread issues four 128-bit loads (32 KB per CTA) before any math, like the
//    activations' streaming kernel (94-98 % of the copy ceiling on the H200).
//  * Each thread scales its row-r vector by A[row0 + r]: one scalar load per row, the same address for
//    the whole warp (a broadcast); A is 16 KB and stays in L1/L2.
//  * Partial tiles (N % 4 or M % 2048 != 0): predicated element-wise with an identity tensor. M % 4 != 0
//    or an unaligned pointer: the predicated path everywhere (correct, slower).
//  * One multiply per element, no accumulation: bit-identical to the fp32 GEMM reference (its other
//    N - 1 terms are exact zeros).
//
// Requirements (else cudaErrorInvalidValue): A fp32 1-D (N); B fp32 2-D (N, M), rows contiguous
// (row stride >= M); C fp32 (N, M) contiguous.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 0.038 ms, 71.12x [69.01-73.40] eager, 75.43x [66.86-84.05] torch.compile, 82% (memory) of its roofline
// Re-measured (H200, 2026-12-02, bench/timing_repeatability.py: the harness's interleaved rounds, 5 runs in one
// process): 70.11x-70.98x eager, within 0.6 % of their median (kernel 38.2-38.5 us).
#include <cutegen/abi.h>

#include <cute/tensor.hpp>

namespace diagmm_impl {

// A 128-bit global store as one st.global.v4 (inline PTX): with UniversalCopy<uint128_t>, and with a plain
// float4 assignment, nvcc split this kernel's stores into 64-bit or 32-bit pieces (the loads stay 128-bit).
struct StoreVec128 {
  using SRegisters = cute::uint128_t[1];
  using DRegisters = cute::uint128_t[1];
  CUTE_HOST_DEVICE static void copy(cute::uint128_t const& src, cute::uint128_t& dst) {
#if defined(__CUDA_ARCH__)
    const uint32_t* w = reinterpret_cast<const uint32_t*>(&src);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};"
                 :: "l"(&dst), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
#endif
  }
};

}  // namespace diagmm_impl

namespace cute {
template <>
struct Copy_Traits<diagmm_impl::StoreVec128> : Copy_Traits<UniversalCopy<uint128_t>> {};
}  // namespace cute

namespace diagmm_impl {

using namespace cute;

constexpr int kThreads = 512;
constexpr int kTileRows = 4;
constexpr int kTileCols = kThreads * 4;  // one 128-bit access per thread per row

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
diag_scale_kernel(const float* __restrict__ a, const float* __restrict__ b, int64_t ldb,
                  float* __restrict__ c, int64_t n_rows, int64_t n_cols) {
  auto shape = make_shape(n_rows, n_cols);
  Tensor mB = make_tensor(make_gmem_ptr(b), shape, make_stride(ldb, _1{}));     // (N, M)
  Tensor mC = make_tensor(make_gmem_ptr(c), shape, make_stride(n_cols, _1{}));  // (N, M)
  Tensor cB = make_identity_tensor(shape);                                      // (row, col)
  auto tile_shape = Shape<Int<kTileRows>, Int<kTileCols>>{};
  auto tile = make_coord(int64_t(blockIdx.x), int64_t(blockIdx.y));  // (row tile, column tile)
  Tensor gB = local_tile(mB, tile_shape, tile);  // (4, 2048)
  Tensor gC = local_tile(mC, tile_shape, tile);
  Tensor gI = local_tile(cB, tile_shape, tile);

  auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                    Layout<Shape<_1, Int<kThreads>>>{},  // threads along a row
                                    Layout<Shape<_1, _4>>{});            // 4 contiguous floats each
  auto tiled_store = make_tiled_copy(Copy_Atom<StoreVec128, float>{}, Layout<Shape<_1, Int<kThreads>>>{},
                                     Layout<Shape<_1, _4>>{});  // the same partition, v4 stores
  auto thr = tiled_copy.get_thread_slice(threadIdx.x);
  Tensor tBgB = thr.partition_S(gB);  // (CPY=(1,4), CPY_ROW=4, CPY_COL=1)
  Tensor tCgC = thr.partition_D(gC);
  Tensor tIgI = thr.partition_S(gI);
  const int64_t row0 = int64_t(blockIdx.x) * kTileRows;

  const bool full = (row0 + kTileRows <= n_rows) && (int64_t(blockIdx.y + 1) * kTileCols <= n_cols);
  if (kVectorized && full) {
    Tensor frag = make_fragment_like(tBgB);
    copy(tiled_copy, tBgB, frag);  // all four rows' loads first ...
    CUTE_UNROLL
    for (int r = 0; r < kTileRows; ++r) {
      const float scale = __ldg(a + row0 + r);
      CUTE_UNROLL
      for (int v = 0; v < size<0>(frag); ++v) frag(v, r, 0) *= scale;
    }
    copy(tiled_store, frag, tCgC);  // ... then the stores
  } else {
    CUTE_UNROLL
    for (int i = 0; i < size(tBgB); ++i) {
      if (elem_less(tIgI(i), shape)) tCgC(i) = a[get<0>(tIgI(i))] * tBgB(i);
    }
  }
}

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

}  // namespace diagmm_impl

using namespace diagmm_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& at = inputs[0];
  const DLTensor& bt = inputs[1];
  const DLTensor& ct = outputs[0];
  if (!is_f32(at) || !is_f32(bt) || !is_f32(ct) || at.ndim != 1 || bt.ndim != 2) return cudaErrorInvalidValue;
  const int64_t n_rows = bt.shape[0], n_cols = bt.shape[1];
  if (at.shape[0] != n_rows || at.strides[0] != 1 || bt.strides[1] != 1 || bt.strides[0] < n_cols ||
      ct.ndim != 2 || ct.shape[0] != n_rows || ct.shape[1] != n_cols || ct.strides[1] != 1 ||
      ct.strides[0] != n_cols) {
    return cudaErrorInvalidValue;
  }
  if (n_rows == 0 || n_cols == 0) return (int)cudaGetLastError();
  const int64_t row_tiles = (n_rows + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (n_cols + kTileCols - 1) / kTileCols;
  if (row_tiles > 0x7fffffff || col_tiles > 65535) return cudaErrorInvalidValue;

  const float* a = cutegen_data<const float>(at);
  const float* b = cutegen_data<const float>(bt);
  float* c = cutegen_data<float>(ct);
  const int64_t ldb = bt.strides[0];
  const bool vec = n_cols % 4 == 0 && ldb % 4 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(c) % 16 == 0;
  const dim3 grid{unsigned(row_tiles), unsigned(col_tiles), 1};
  if (vec) {
    diag_scale_kernel<true><<<grid, kThreads, 0, stream>>>(a, b, ldb, c, n_rows, n_cols);
  } else {
    diag_scale_kernel<false><<<grid, kThreads, 0, stream>>>(a, b, ldb, c, n_rows, n_cols);
  }
  return (int)cudaGetLastError();
}
