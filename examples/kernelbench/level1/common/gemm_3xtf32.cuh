// gemm_3xtf32.cuh -- fp32 GEMM at fp32 accuracy on the tensor cores: error-compensated 3xTF32.
//
//   C[b](m,n) = sum_k A[b](m,k) * B[b](k,n)      (fp32 in, fp32 out, fp32 accumulate)
//
// Structure: the kernel is put together as CUTLASS 3 puts its GEMMs together
// (cutlass/gemm/kernel/sm70_gemm.hpp: a tile scheduler, a collective mainloop and a collective
// epilogue around one accumulator fragment), one section each below, each with its design notes:
//  * TileScheduler: which output tile and batch a CTA owns, which k-tiles it accumulates (split-K,
//    the triangular mode's clipped ranges and skipped tiles), the launch order and the grid.
//  * Tf32x3Mainloop: the k-tile loop -- the 4-stage cp.async pipeline, the tf32 split and the
//    three MMAs with promotion -- accumulating into the CTA's register fragment.
//  * Epilogue: that fragment into C -- predicated stores, split-K atomics, the diagonal masking.
// gemm_kernel composes them: scheduler -> mainloop (when the tile has k-tiles) -> epilogue.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>

namespace gemm_3xtf32 {

using namespace cute;

enum class Triangle { kNone = 0, kUpper = 1, kLower = 2 };

// One GEMM (or a batch of them), strides in elements. A is (M,K), B is (K,N), C is (M,N) row-major.
struct Problem {
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  int lda = 0;  // A: K-major -> A(m,k) at m*lda + k; M-major -> at k*lda + m
  int ldb = 0;  // B: K-major -> B(k,n) at n*ldb + k; N-major -> at k*ldb + n
  int ldc = 0;  // C(m,n) at m*ldc + n
  int batch = 1;
  int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0;
  Triangle triangle = Triangle::kNone;
  int splits = 0;  // split-K factor; 0 picks one from the tile count and the SM count
  bool store_pairs = false;  // set by launch(): C's rows allow 8-byte stores of column pairs
};

// The CTA tile and block (the mainloop's design says why these sizes).
constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 32;
constexpr int kStages = 4;
constexpr int kThreads = 256;
using CtaTiler = Shape<Int<kBM>, Int<kBN>, Int<kBK>>;

// Is C(m,n) on the zero side of the triangle?
CUTE_DEVICE bool zero_side(Triangle t, int m, int n) {
  return (t == Triangle::kUpper && m > n) || (t == Triangle::kLower && m < n);
}

// ---------------------------------------------------------------------------------------------
// Tile scheduler: one CTA per output tile and (batch, split), launched as a 3-D grid.
//  * Batch: blockIdx.z walks batch x splits; each batch index moves A, B, C by its batch stride
//    (stride 0 broadcasts an operand).
//  * Split-K (few output tiles, long K): each split owns a contiguous range of k-tiles (the
//    epilogue adds the partial tiles up in C).
//  * Triangular mode (upper: C = triu(A @ B) with A, B upper triangular; lower likewise): tiles
//    entirely on the zero side of C's diagonal run no mainloop (the epilogue stores their zeros);
//    the others run only the k-tiles where both operands can be nonzero (upper:
//    m0 <= k < n0 + BN; lower: n0 <= k < m0 + BM); the tiles with the longest k-ranges are
//    launched first. This relies on A and B being triangular (the problem's definition): entries
//    on their zero sides are not read.
// ---------------------------------------------------------------------------------------------

// The k-tiles [begin, end) a CTA accumulates (begin == end: none).
struct KRange {
  int begin, end;
};

// The device's SM count, for the split-K choice (132, an H200's, when the query fails).
inline int sm_count() {
  static int count = [] {
    int device = 0, n = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
    return n > 0 ? n : 132;
  }();
  return count;
}

struct TileScheduler {
  // The output tile (m, n) of batch `batch` one CTA computes, over split `split`'s k-tiles.
  struct WorkTile {
    int m, n;  // tile coordinates (units of kBM, kBN)
    int batch, split;

    CUTE_DEVICE auto cta_coord() const { return make_coord(m, n, _); }
  };

  // This CTA's tile, from blockIdx.
  CUTE_DEVICE static WorkTile get_current_work(const Problem& p) {
    // The grid runs roughly in blockIdx order. Triangular tiles' k-ranges grow with their distance
    // from the diagonal, so start at the far column (upper) or row (lower): longest first.
    int tile_m = int(blockIdx.x), tile_n = int(blockIdx.y);
    if (p.triangle == Triangle::kUpper) tile_n = int(gridDim.y) - 1 - tile_n;
    if (p.triangle == Triangle::kLower) tile_m = int(gridDim.x) - 1 - tile_m;
    const int batch = int(blockIdx.z) / max(p.splits, 1);
    const int split = int(blockIdx.z) % max(p.splits, 1);
    return {tile_m, tile_n, batch, split};
  }

  // The k-tiles the tile's split accumulates (cf. CUTLASS's get_work_k_tile_start / _count).
  CUTE_DEVICE static KRange get_work_k_range(const Problem& p, const WorkTile& work) {
    const int m0 = work.m * kBM, n0 = work.n * kBN;
    const int k_tiles = (p.K + kBK - 1) / kBK;
    int begin = 0, end = k_tiles;
    if (p.triangle == Triangle::kUpper) {  // A(m,k) != 0 needs k >= m; B(k,n) != 0 needs k <= n
      begin = m0 / kBK;
      end = min(end, (n0 + kBN + kBK - 1) / kBK);
    } else if (p.triangle == Triangle::kLower) {  // A(m,k) != 0 needs k <= m; B(k,n) needs k >= n
      begin = n0 / kBK;
      end = min(end, (m0 + kBM + kBK - 1) / kBK);
    }
    if (p.splits > 1) {
      const int per_split = (k_tiles + p.splits - 1) / p.splits;
      begin = max(begin, work.split * per_split);
      end = min(end, (work.split + 1) * per_split);
    }
    return {begin, max(begin, end)};
  }

  // Does the whole tile lie on the triangle's zero side (no mainloop; the epilogue stores zeros)?
  CUTE_DEVICE static bool is_zero_tile(const Problem& p, const WorkTile& work) {
    const int m0 = work.m * kBM, n0 = work.n * kBN;
    return zero_side(p.triangle, m0, n0 + kBN - 1) && zero_side(p.triangle, m0 + kBM - 1, n0);
  }

  // Split-K factor: only when the output tiles cannot fill the GPU and K is long enough that
  // each split still runs >= 16 k-tiles.
  static int auto_splits(const Problem& p, int64_t ctas) {
    const int k_tiles = (p.K + kBK - 1) / kBK;
    if (p.triangle != Triangle::kNone || ctas * 2 > sm_count() || k_tiles < 32) return 1;
    const int want = int((sm_count() + ctas - 1) / ctas);
    return max(1, min(want, k_tiles / 16));
  }

  // Fixes p.splits (when 0) and the grid; false when the grid exceeds CUDA's limits.
  static bool plan(Problem& p, dim3& grid) {
    const int64_t tiles_m = (p.M + kBM - 1) / kBM, tiles_n = (p.N + kBN - 1) / kBN;
    if (p.splits <= 0) p.splits = auto_splits(p, tiles_m * tiles_n * p.batch);
    if (tiles_m > 0x7fffffff || tiles_n > 65535 || int64_t(p.batch) * p.splits > 65535) {
      return false;
    }
    grid = dim3(unsigned(tiles_m), unsigned(tiles_n), unsigned(p.batch * p.splits));
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// Mainloop: the CTA's k-tiles into its accumulator fragment.
//
// Precision (why not plain TF32): TF32 keeps 10 of fp32's 23 mantissa bits, so each input is off
// by up to 2^-11 relative. On all-positive inputs (KernelBench's torch.rand) those errors average
// out, but on signed inputs, where C is a cancelling sum, plain TF32 misses atol = rtol = 1e-4 by
// ~160x (GEMM.md, bench/gemm_3xtf32_accuracy.py); relying on the benchmark's distribution is not
// allowed. 3xTF32 (CUTLASS's OpMultiplyAddFastF32, example 27_ampere_3xtf32) splits every operand
//     big   = tf32(x)        (cvt.rna.tf32.f32: round to nearest, ties away)
//     small = x - big        (exact in fp32, then truncated to tf32 by masking the low 13 bits)
// and accumulates small*big + big*small + big*big in fp32 on the tensor cores (small*small,
// ~2^-22 relative, is dropped).
//
// Promotion: the tensor cores' fp32 accumulation is not IEEE round-to-nearest (measurements of
// V100/A100 show truncation when aligning and normalizing). Modelled that way, 3xTF32 alone is at
// 0.64 of the tolerance on rand inputs at K = 8192 (the bias grows with K) and 22x over it on
// signed inputs. So the MMAs accumulate one k-tile (32 deep) at a time into a scratch
// accumulator, which is added into the main one with ordinary fp32 adds (RN) and cleared: 64 FADDs
// per k-tile per thread against 192 MMAs per k-tile per warp (64 per product, 3 products). Modelled
// error: 0.01 (rand) / 0.37 (randn) of the tolerance, about that of an fp32 SIMT GEMM (0.00 / 0.30).
//
// Design: the CuTe sm80 mainloop of examples/idioms/gemm_sm80_mma_sync with fp32 operands.
//  * CTA tile 128 x 128 x 32, 256 threads = 2 x 4 warps, warp tile 64 x 32 (64 fp32 accumulators
//    per thread, leaving registers for the raw, big and small fragments: 3 x 24 per k-block).
//  * MMA atom SM80_16x8x8_F32TF32TF32F32_TN. Each k-block (k8): smem -> raw fp32 registers for
//    k-block k+1 is issued before the split and the three MMAs of k-block k.
//  * 4-stage cp.async gmem -> smem pipeline, fp32 tiles, 128 KB smem, 1 CTA per SM.
//  * Operand majorness is a template parameter (covers A^T, B^T, both):
//      - K-major operand: smem atom Swizzle<3,2,3> o (8,32):(32,1) (128-byte rows of K), loaded to
//        registers with ldmatrix (SM75_U32x4_LDSM_N: 8x4 32-bit words per matrix = the tf32
//        fragment's (row, k) pairs).
//      - MN-major operand: smem atom Swizzle<2,3,2> o (32,8):(1,32) (128-byte rows of M or N),
//        loaded with 32-bit LDS: ldmatrix's transpose works on 16-bit elements only, so it cannot
//        feed 32-bit operands (CUTLASS's sm80 tf32 configurations make the same choice). The
//        swizzle XORs k mod 4 into bits 3-4 of the m/n offset: a fragment load touches 8
//        consecutive m/n x 4 consecutive k per warp, which then land in 32 distinct banks
//        (CUTLASS's Swizzle<3,2,3> maps k = c and c+1 onto the same 8 banks: 2-way conflicts).
//        Bits 0-2 stay put, so 16-byte cp.async vectors stay contiguous.
//  * gmem -> smem: 16-byte cp.async.cg when every row of every operand is 16-byte aligned, else
//    4-byte cp.async.ca (irregular shapes). Both zero-fill what lies outside M, N or K, so edge
//    tiles need no special case in the mainloop; the epilogue predicates its stores on M and N.
//    Only the scheduler's k-range is loaded (see the triangular mode).
// ---------------------------------------------------------------------------------------------

using TiledMma = TiledMMA<MMA_Atom<SM80_16x8x8_F32TF32TF32F32_TN>,
                          Layout<Shape<_2, _4, _1>>,  // 2 x 4 warps -> warp tile 64 x 32
                          // N permutation: each warp's two n8 atoms side by side (16 contiguous
                          // n), so one ldmatrix.x4 feeds both when B is K-major.
                          Tile<_32, Layout<Shape<_8, _4, _2>, Stride<_1, _16, _8>>, _8>>;
static_assert(decltype(size(TiledMma{}))::value == kThreads);

// Shared-memory layout and copies for one operand: (MN, K) = (128, 32) per stage.
template <bool kKMajor, int kVec>
struct Operand {
  using SmemAtom = std::conditional_t<
      kKMajor, decltype(composition(Swizzle<3, 2, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{})),
      decltype(composition(Swizzle<2, 3, 2>{}, Layout<Shape<_32, _8>, Stride<_1, _32>>{}))>;
  using SmemLayout =
      decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kBM>{}, Int<kBK>{}, Int<kStages>{})));

  // 16-byte vectors: L2-only .cg; 4-byte vectors: .ca (the only 4-byte form). Both zero-fill.
  using CopyOp = std::conditional_t<kVec == 4, SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>,
                                    SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>>;
  // Thread layouts: the contiguous dimension gets kBK/kVec (K-major) or kBM/kVec (MN-major)
  // threads, each moving kVec consecutive floats, so a warp covers whole 128-byte rows.
  static constexpr int kAlongContig = (kKMajor ? kBK : kBM) / kVec;
  static constexpr int kAcross = kThreads / kAlongContig;
  using ThreadLayout = std::conditional_t<
      kKMajor,
      Layout<Shape<Int<kAcross>, Int<kAlongContig>>, Stride<Int<kAlongContig>, _1>>,
      Layout<Shape<Int<kAlongContig>, Int<kAcross>>, Stride<_1, Int<kAlongContig>>>>;
  using ValueLayout = std::conditional_t<kKMajor, Layout<Shape<_1, Int<kVec>>>,
                                         Layout<Shape<Int<kVec>, _1>>>;
  using GmemCopy = decltype(make_tiled_copy(Copy_Atom<CopyOp, float>{}, ThreadLayout{},
                                            ValueLayout{}));
  using SmemCopyAtom = std::conditional_t<kKMajor, Copy_Atom<SM75_U32x4_LDSM_N, float>,
                                          Copy_Atom<UniversalCopy<float>, float>>;
};

// big = tf32(x) rounded to nearest; small = x - big, truncated to tf32 here (its low 13 bits cleared).
template <class Raw, class Big, class Small>
CUTE_DEVICE void split_3xtf32(Raw const& raw, Big& big, Small& small) {
  Tensor big_bits = recast<uint32_t>(big);
  Tensor small_bits = recast<uint32_t>(small);
  CUTE_UNROLL
  for (int i = 0; i < size(raw); ++i) {
    const float x = raw(i);
    uint32_t b;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b) : "f"(x));
    big_bits(i) = b;
    // Masked here rather than trusting the MMA to ignore the low 13 bits.
    small_bits(i) = __float_as_uint(x - __uint_as_float(b)) & 0xffffe000u;
  }
}

template <bool kAKMajor, bool kBKMajor, int kVec>
struct Tf32x3Mainloop {
  using OpA = Operand<kAKMajor, kVec>;
  using OpB = Operand<kBKMajor, kVec>;
  struct SharedStorage {
    cute::array_aligned<float, cosize_v<typename OpA::SmemLayout>, 1024> A;
    cute::array_aligned<float, cosize_v<typename OpB::SmemLayout>, 1024> B;
  };
  static constexpr int kSmemBytes = int(sizeof(SharedStorage));  // 128 KB

  // Operand strides in CuTe's (M,K) / (N,K) convention.
  CUTE_DEVICE static auto stride_a(const Problem& p) {
    if constexpr (kAKMajor) return make_stride(p.lda, Int<1>{});
    else return make_stride(Int<1>{}, p.lda);
  }
  CUTE_DEVICE static auto stride_b(const Problem& p) {
    if constexpr (kBKMajor) return make_stride(p.ldb, Int<1>{});
    else return make_stride(Int<1>{}, p.ldb);
  }

  // Adds the k-tiles kr of gA (BM,BK,k) x gB (BN,BK,k) into tCrC (the TiledMma's C fragment of
  // the CTA tile); tileA, tileB hold their (m,k) / (n,k) coordinates, for predication.
  template <class GA, class TileA, class GB, class TileB, class Accum>
  CUTE_DEVICE void operator()(const Problem& p, const KRange kr, GA const& gA, TileA const& tileA,
                              GB const& gB, TileB const& tileB, TiledMma const& mma, Accum& tCrC,
                              char* smem_buf) const {
    ThrMMA thr_mma = mma.get_slice(threadIdx.x);
    auto& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
    Tensor sA = make_tensor(make_smem_ptr(smem.A.begin()), typename OpA::SmemLayout{});
    Tensor sB = make_tensor(make_smem_ptr(smem.B.begin()), typename OpB::SmemLayout{});

    // gmem -> smem, zero-filled outside (M or N) x K.
    typename OpA::GmemCopy copy_a;
    typename OpB::GmemCopy copy_b;
    ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
    ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
    Tensor tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    Tensor tAsA = thr_copy_a.partition_D(sA);  // (CPY,CPY_M,CPY_K,PIPE)
    Tensor tAcA = thr_copy_a.partition_S(tileA);
    Tensor tBgB = thr_copy_b.partition_S(gB);
    Tensor tBsB = thr_copy_b.partition_D(sB);
    Tensor tBcB = thr_copy_b.partition_S(tileB);

    auto load_tile = [&](int k_tile, int pipe) {
      CUTE_UNROLL
      for (int i = 0; i < size<1>(tAsA); ++i) {
        CUTE_UNROLL
        for (int j = 0; j < size<2>(tAsA); ++j) {
          const auto c = tAcA(0, i, j, k_tile);
          const bool in = get<0>(c) < p.M && get<1>(c) < p.K && k_tile < kr.end;
          copy(copy_a.with(in), tAgA(_, i, j, k_tile), tAsA(_, i, j, pipe));
        }
      }
      CUTE_UNROLL
      for (int i = 0; i < size<1>(tBsB); ++i) {
        CUTE_UNROLL
        for (int j = 0; j < size<2>(tBsB); ++j) {
          const auto c = tBcB(0, i, j, k_tile);
          const bool in = get<0>(c) < p.N && get<1>(c) < p.K && k_tile < kr.end;
          copy(copy_b.with(in), tBgB(_, i, j, k_tile), tBsB(_, i, j, pipe));
        }
      }
      cp_async_fence();
    };

    // Prefetch kStages-1 k-tiles. Past kr.end the copies are predicated off (they zero-fill a
    // stage nobody reads) but still form a group, which keeps the wait counts uniform.
    int k_tile_next = kr.begin;
    CUTE_UNROLL
    for (int pipe = 0; pipe < kStages - 1; ++pipe) {
      load_tile(k_tile_next, pipe);
      ++k_tile_next;
    }

    // smem -> registers: raw fp32 fragments, then split into big/small tf32 per k-block.
    Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA,MMA_M,MMA_K) tf32
    Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA,MMA_N,MMA_K) tf32
    Tensor tCrA_raw = make_tensor<float>(tCrA.layout());
    Tensor tCrB_raw = make_tensor<float>(tCrB.layout());
    Tensor big_a = make_fragment_like(tCrA(_, _, 0));
    Tensor small_a = make_fragment_like(tCrA(_, _, 0));
    Tensor big_b = make_fragment_like(tCrB(_, _, 0));
    Tensor small_b = make_fragment_like(tCrB(_, _, 0));

    auto s2r_copy_a = make_tiled_copy_A(typename OpA::SmemCopyAtom{}, mma);
    ThrCopy s2r_thr_a = s2r_copy_a.get_slice(threadIdx.x);
    Tensor tXsA = s2r_thr_a.partition_S(sA);        // (CPY,MMA_M,MMA_K,PIPE)
    Tensor tXrA = s2r_thr_a.retile_D(tCrA_raw);     // (CPY,MMA_M,MMA_K)
    auto s2r_copy_b = make_tiled_copy_B(typename OpB::SmemCopyAtom{}, mma);
    ThrCopy s2r_thr_b = s2r_copy_b.get_slice(threadIdx.x);
    Tensor tXsB = s2r_thr_b.partition_S(sB);
    Tensor tXrB = s2r_thr_b.retile_D(tCrB_raw);

    int pipe_read = 0;
    int pipe_write = kStages - 1;
    Tensor tXsA_p = tXsA(_, _, _, pipe_read);
    Tensor tXsB_p = tXsB(_, _, _, pipe_read);
    constexpr int kKBlocks = size<2>(decltype(tCrA){});  // 32 / 8 = 4
    // The tensor cores accumulate one k-tile (192 MMAs per warp) here; see "Promotion".
    Tensor tCrC_tile = make_fragment_like(tCrC);
    clear(tCrC_tile);

    cp_async_wait<kStages - 2>();
    __syncthreads();
    copy(s2r_copy_a, tXsA_p(_, _, Int<0>{}), tXrA(_, _, Int<0>{}));
    copy(s2r_copy_b, tXsB_p(_, _, Int<0>{}), tXrB(_, _, Int<0>{}));

    CUTE_NO_UNROLL
    for (int k_tile = kr.begin; k_tile < kr.end; ++k_tile) {
      CUTE_UNROLL
      for (int k_block = 0; k_block < kKBlocks; ++k_block) {
        if (k_block == kKBlocks - 1) {
          // Next stage: wait for its cp.async group; every warp is done with the stage that the
          // next gmem load overwrites.
          tXsA_p = tXsA(_, _, _, pipe_read);
          tXsB_p = tXsB(_, _, _, pipe_read);
          cp_async_wait<kStages - 2>();
          __syncthreads();
        }
        const int k_block_next = (k_block + 1) % kKBlocks;
        copy(s2r_copy_a, tXsA_p(_, _, k_block_next), tXrA(_, _, k_block_next));
        copy(s2r_copy_b, tXsB_p(_, _, k_block_next), tXrB(_, _, k_block_next));
        if (k_block == 0) {
          load_tile(k_tile_next, pipe_write);
          ++k_tile_next;
          pipe_write = pipe_read;
          pipe_read = (pipe_read == kStages - 1) ? 0 : pipe_read + 1;
        }
        split_3xtf32(tCrA_raw(_, _, k_block), big_a, small_a);
        split_3xtf32(tCrB_raw(_, _, k_block), big_b, small_b);
        // Small terms first: they are the corrections, added while the accumulator is small.
        gemm(mma, small_a, big_b, tCrC_tile);
        gemm(mma, big_a, small_b, tCrC_tile);
        gemm(mma, big_a, big_b, tCrC_tile);
      }
      // Promote the k-tile's partial sums into the main accumulator with IEEE fp32 adds.
      CUTE_UNROLL
      for (int i = 0; i < size(tCrC); ++i) {
        tCrC(i) += tCrC_tile(i);
        tCrC_tile(i) = 0.0f;
      }
    }
    cp_async_wait<0>();  // drain the predicated-off tail groups before the CTA retires
  }
};

// ---------------------------------------------------------------------------------------------
// Epilogue: the accumulator fragment straight from registers into C, predicated on M and N.
//  * Split-K: each split adds its partial tile into C with fp32 atomics (red.global.add.f32)
//    after a cudaMemset2DAsync(C, 0) (clear_for_split_k). Chosen over a workspace + reduction
//    kernel because the ABI gives no workspace and the partial traffic is tiny (splits x M x N
//    floats). The summation order across splits varies from run to run (last-bit
//    nondeterminism, far inside 1e-4).
//  * Triangular mode: diagonal tiles mask C's zero side element by element; tiles entirely on
//    the zero side (no mainloop: their fragment is still clear) store zeros.
//  * In the sm80 C layout, mode 0 of a thread's fragment is (2 adjacent columns, 2 rows): one
//    8-byte store per column pair when C's rows allow it (store_pairs).
// ---------------------------------------------------------------------------------------------

// 8-byte column-pair stores are aligned in every row of every batch.
inline bool can_store_pairs(const Problem& p) {
  return reinterpret_cast<uintptr_t>(p.C) % 8 == 0 && p.N % 2 == 0 && p.ldc % 2 == 0 &&
         p.batch_stride_c % 2 == 0;
}

// Split-K's partial sums are added into C, so C starts at zero.
inline cudaError_t clear_for_split_k(const Problem& p, cudaStream_t stream) {
  if (p.splits <= 1) return cudaSuccess;
  for (int b = 0; b < p.batch; ++b) {
    cudaError_t err = cudaMemset2DAsync(p.C + b * p.batch_stride_c, size_t(p.ldc) * sizeof(float),
                                        0, size_t(p.N) * sizeof(float), size_t(p.M), stream);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

// Holds this thread's part of C's tile, partitioned as the accumulators are; the kernel makes it
// before the mainloop (see the kernel's note on order) and calls it after.
template <class TensorC, class CoordC>
struct Epilogue {
  TensorC tCgC;  // (MMA,MMA_M,MMA_N)
  CoordC tCcC;   // their (m,n) coordinates, for predication

  template <class Accum>
  CUTE_DEVICE void operator()(const Problem& p, Accum const& tCrC) {
    CUTE_STATIC_ASSERT_V(size<0>(tCrC) == Int<4>{});
    CUTE_STATIC_ASSERT_V((stride<0, 0>(tCgC) == Int<1>{}));
    CUTE_UNROLL
    for (int mi = 0; mi < size<1>(tCrC); ++mi) {
      CUTE_UNROLL
      for (int ni = 0; ni < size<2>(tCrC); ++ni) {
        CUTE_UNROLL
        for (int h = 0; h < 2; ++h) {
          const auto coord = tCcC(make_coord(0, h), mi, ni);
          const int m = get<0>(coord), n = get<1>(coord);
          if (m >= p.M) continue;
          float v0 = tCrC(make_coord(0, h), mi, ni);
          float v1 = tCrC(make_coord(1, h), mi, ni);
          if (zero_side(p.triangle, m, n)) v0 = 0.0f;
          if (zero_side(p.triangle, m, n + 1)) v1 = 0.0f;
          float* dst = &tCgC(make_coord(0, h), mi, ni);
          if (p.splits > 1) {
            if (n < p.N && v0 != 0.0f) atomicAdd(dst, v0);
            if (n + 1 < p.N && v1 != 0.0f) atomicAdd(dst + 1, v1);
          } else if (p.store_pairs) {  // N even: n < N implies n + 1 < N
            if (n < p.N) *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
          } else {
            if (n < p.N) dst[0] = v0;
            if (n + 1 < p.N) dst[1] = v1;
          }
        }
      }
    }
  }
};

template <class TensorC, class CoordC>
CUTE_DEVICE Epilogue<TensorC, CoordC> make_epilogue(TensorC const& tCgC, CoordC const& tCcC) {
  return {tCgC, tCcC};
}

// ---------------------------------------------------------------------------------------------
// The kernel: the three parts around one accumulator fragment (cf. sm70_gemm.hpp's operator()).
// The statements keep the order of the unsplit kernel (C partitioned before the mainloop, the
// k-range asked for after the accumulators are cleared): its SASS, byte for byte, except a
// reordered prologue in <false, true, 1>. Other orders move registers: <true, false, 1/4> took
// 235/241 (not 238/240) with C partitioned after the mainloop, 237/242 with the k-range first.
// ---------------------------------------------------------------------------------------------

template <bool kAKMajor, bool kBKMajor, int kVec>
__global__ void __launch_bounds__(kThreads, 1) gemm_kernel(Problem p) {
  using Mainloop = Tf32x3Mainloop<kAKMajor, kBKMajor, kVec>;
  const TileScheduler::WorkTile work = TileScheduler::get_current_work(p);
  const float* A = p.A + work.batch * p.batch_stride_a;
  const float* B = p.B + work.batch * p.batch_stride_b;
  float* C = p.C + work.batch * p.batch_stride_c;

  // Full tensors in CuTe's (M,K) / (N,K) / (M,N) convention, and this CTA's tiles of them.
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(p.M, p.K), Mainloop::stride_a(p));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(p.N, p.K), Mainloop::stride_b(p));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(p.M, p.N), make_stride(p.ldc, Int<1>{}));
  Tensor cA = make_identity_tensor(shape(mA));  // (m,k) coordinates, for predication
  Tensor cB = make_identity_tensor(shape(mB));
  Tensor cC = make_identity_tensor(shape(mC));
  Tensor gA = local_tile(mA, CtaTiler{}, work.cta_coord(), Step<_1, X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, CtaTiler{}, work.cta_coord(), Step<X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, CtaTiler{}, work.cta_coord(), Step<_1, _1, X>{});  // (BM,BN)
  Tensor tileA = local_tile(cA, CtaTiler{}, work.cta_coord(), Step<_1, X, _1>{});
  Tensor tileB = local_tile(cB, CtaTiler{}, work.cta_coord(), Step<X, _1, _1>{});
  Tensor tileC = local_tile(cC, CtaTiler{}, work.cta_coord(), Step<_1, _1, X>{});

  TiledMma mma;
  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  auto epilogue = make_epilogue(thr_mma.partition_C(gC), thr_mma.partition_C(tileC));
  Tensor accumulators = thr_mma.make_fragment_C(epilogue.tCgC);  // (MMA,MMA_M,MMA_N)
  clear(accumulators);
  const KRange kr = TileScheduler::get_work_k_range(p, work);
  if (!TileScheduler::is_zero_tile(p, work) && kr.end > kr.begin) {
    extern __shared__ char smem_buf[];
    Mainloop{}(p, kr, gA, tileA, gB, tileB, mma, accumulators, smem_buf);
  }
  epilogue(p, accumulators);
}

// 16-byte vectors are legal when every row start of every operand is 16-byte aligned.
template <bool kAKMajor, bool kBKMajor>
inline bool rows_16b_aligned(const Problem& p) {
  auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  const int contig_a = kAKMajor ? p.K : p.M;
  const int contig_b = kBKMajor ? p.K : p.N;
  return aligned(p.A) && aligned(p.B) && p.lda % 4 == 0 && p.ldb % 4 == 0 && contig_a % 4 == 0 &&
         contig_b % 4 == 0 && p.batch_stride_a % 4 == 0 && p.batch_stride_b % 4 == 0;
}

template <bool kAKMajor, bool kBKMajor, int kVec>
inline cudaError_t launch(Problem p, cudaStream_t stream) {
  auto kernel = gemm_kernel<kAKMajor, kBKMajor, kVec>;
  constexpr int smem = Tf32x3Mainloop<kAKMajor, kBKMajor, kVec>::kSmemBytes;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  dim3 grid;
  if (!TileScheduler::plan(p, grid)) return cudaErrorInvalidValue;
  p.store_pairs = can_store_pairs(p);
  err = clear_for_split_k(p, stream);
  if (err != cudaSuccess) return err;
  kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// Checks what the kernel cannot do (returns cudaErrorInvalidValue), picks the vector width, runs.
template <bool kAKMajor, bool kBKMajor>
inline int run(const Problem& p, cudaStream_t stream) {
  if (p.M <= 0 || p.N <= 0 || p.K <= 0 || p.batch <= 0) return cudaErrorInvalidValue;
  if (p.lda < (kAKMajor ? p.K : p.M) || p.ldb < (kBKMajor ? p.K : p.N) || p.ldc < p.N) {
    return cudaErrorInvalidValue;
  }
  // 32-bit offsets inside one matrix (CuTe index arithmetic is int): each matrix < 2^31 elements.
  const int64_t kMax = 0x7fffffff;
  const int64_t rows_a = kAKMajor ? p.M : p.K, rows_b = kBKMajor ? p.N : p.K;
  if (rows_a * p.lda > kMax || rows_b * p.ldb > kMax || int64_t(p.M) * p.ldc > kMax) {
    return cudaErrorInvalidValue;
  }
  if (p.triangle != Triangle::kNone && (p.M != p.N || p.N != p.K)) return cudaErrorInvalidValue;
  if (rows_16b_aligned<kAKMajor, kBKMajor>(p)) return int(launch<kAKMajor, kBKMajor, 4>(p, stream));
  return int(launch<kAKMajor, kBKMajor, 1>(p, stream));
}

}  // namespace gemm_3xtf32
