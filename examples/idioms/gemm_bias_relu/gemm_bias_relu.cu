// gemm_bias_relu.cu -- C = relu(A @ B + bias), A (M,K), B (K,N) bf16 row-major, bias (N) bf16, C (M,N) bf16,
// fp32 accumulate (idiom: a fused epilogue on the sm80 tensor-core mainloop). Problem: 4096^3.
//
// The mainloop is examples/idioms/gemm_sm80_mma_sync's (CTA 128x128x64, 2x2 warps, SM80_16x8x16_F32BF16BF16F32_TN, 3-stage
// cp.async into Swizzle<3,3,3> smem, ldmatrix). The epilogue is the idiom:
//  * an identity tensor over C, tiled and partitioned EXACTLY like the accumulators (local_tile +
//    thr_mma.partition_C), gives every accumulator its global (m, n) coordinate: the bias is indexed by
//    n = get<1>(coord), and a bound check would be elem_less(coord, shape(mC)) (not needed here: the
//    launcher requires whole tiles);
//  * bias add + ReLU in fp32 on the accumulators, one rounding to bf16 at the end (never round the
//    partial result, then add);
//  * the sm80 C fragment gives each thread 2 adjacent columns: stored as one bf16x2 (4-byte) store.
// Requirements (else cudaErrorInvalidValue): M, N % 128 == 0, K % 64 == 0, row-major, 16-byte aligned.
#include <cutegen/abi.h>

#include <cuda_bf16.h>
#include <cute/tensor.hpp>

// A named namespace (not an anonymous one): nvcc's host stub cannot disambiguate an anonymous
// namespace from CuTe's own when `using namespace cute` is in effect.
namespace gemm_bias_relu_impl {

using namespace cute;

using Element = cute::bfloat16_t;

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 64;
constexpr int kStages = 3;
using TileShape = Shape<Int<kBM>, Int<kBN>, Int<kBK>>;

using TiledMma = TiledMMA<MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>,
                          Layout<Shape<_2, _2, _1>>,  // 2x2x1 warps
                          Tile<_32, _32, _16>>;       // 32x32x16 permutation for ldmatrix.x4
constexpr int kThreads = 128;
static_assert(decltype(size(TiledMma{}))::value == kThreads);

// A: (M,K) K-major.
using SmemLayoutAtomA =
    decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
using SmemLayoutA = decltype(tile_to_shape(SmemLayoutAtomA{},
                                           make_shape(Int<kBM>{}, Int<kBK>{}, Int<kStages>{})));
using GmemTiledCopyA =
    decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, Element>{},
                             Layout<Shape<_16, _8>, Stride<_8, _1>>{},  // 16x8 threads, k-major
                             Layout<Shape<_1, _8>>{}));                 // 8 bf16 along k
using SmemCopyAtomA = Copy_Atom<SM75_U32x4_LDSM_N, Element>;

// B: (N,K) N-major (row-major K x N in memory).
using SmemLayoutAtomB =
    decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _8>, Stride<_1, _64>>{}));
using SmemLayoutB = decltype(tile_to_shape(SmemLayoutAtomB{},
                                           make_shape(Int<kBN>{}, Int<kBK>{}, Int<kStages>{})));
using GmemTiledCopyB =
    decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, Element>{},
                             Layout<Shape<_16, _8>, Stride<_1, _16>>{},  // 16x8 threads, n-major
                             Layout<Shape<_8, _1>>{}));                  // 8 bf16 along n
using SmemCopyAtomB = Copy_Atom<SM75_U16x8_LDSM_T, Element>;

struct SharedStorage {
  cute::array_aligned<Element, cosize_v<SmemLayoutA>, 1024> A;
  cute::array_aligned<Element, cosize_v<SmemLayoutB>, 1024> B;
};
constexpr int kSmemBytes = int(sizeof(SharedStorage));  // 96 KB

__global__ void __launch_bounds__(kThreads)
gemm_kernel(const Element* __restrict__ A, const Element* __restrict__ B, const Element* __restrict__ bias,
            Element* __restrict__ C, int M, int N, int K) {
  // Full tensors in CuTe's (M,K) / (N,K) / (M,N) convention.
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));  // K-major
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(Int<1>{}, N));  // N-major
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));  // row-major

  // This CTA's tiles.
  auto cta_tiler = TileShape{};
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)

  extern __shared__ char smem_buf[];
  SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(smem.A.begin()), SmemLayoutA{});  // (BM,BK,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem.B.begin()), SmemLayoutB{});  // (BN,BK,PIPE)

  // gmem -> smem partitioning.
  GmemTiledCopyA copy_a;
  GmemTiledCopyB copy_b;
  ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
  Tensor tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  Tensor tAsA = thr_copy_a.partition_D(sA);  // (CPY,CPY_M,CPY_K,PIPE)
  ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
  Tensor tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
  Tensor tBsB = thr_copy_b.partition_D(sB);  // (CPY,CPY_N,CPY_K,PIPE)

  // Prefetch: start the first kStages-1 k-tiles.
  constexpr int K_PIPE_MAX = kStages;
  int k_tile_count = size<3>(tAgA);
  int k_tile_next = 0;
  CUTE_UNROLL
  for (int k_pipe = 0; k_pipe < K_PIPE_MAX - 1; ++k_pipe) {
    copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, k_pipe));
    copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, k_pipe));
    cp_async_fence();
    --k_tile_count;
    if (k_tile_count > 0) ++k_tile_next;
  }

  // MMA partitioning and accumulators.
  TiledMma mma;
  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCgC = thr_mma.partition_C(gC);                  // (MMA,MMA_M,MMA_N)
  Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA,MMA_M,MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA,MMA_N,MMA_K)
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);            // (MMA,MMA_M,MMA_N) fp32
  clear(tCrC);

  // smem -> rmem (ldmatrix) partitioning, retiled to the MMA fragments.
  TiledCopy s2r_copy_a = make_tiled_copy_A(SmemCopyAtomA{}, mma);
  ThrCopy s2r_thr_copy_a = s2r_copy_a.get_slice(threadIdx.x);
  Tensor tXsA = s2r_thr_copy_a.partition_S(sA);  // (CPY,MMA_M,MMA_K,PIPE)
  Tensor tXrA = s2r_thr_copy_a.retile_D(tCrA);   // (CPY,MMA_M,MMA_K)
  TiledCopy s2r_copy_b = make_tiled_copy_B(SmemCopyAtomB{}, mma);
  ThrCopy s2r_thr_copy_b = s2r_copy_b.get_slice(threadIdx.x);
  Tensor tXsB = s2r_thr_copy_b.partition_S(sB);  // (CPY,MMA_N,MMA_K,PIPE)
  Tensor tXrB = s2r_thr_copy_b.retile_D(tCrB);   // (CPY,MMA_N,MMA_K)

  CUTE_STATIC_ASSERT_V(size<1>(tCgC) == size<1>(tCrA));  // MMA_M
  CUTE_STATIC_ASSERT_V(size<2>(tCgC) == size<1>(tCrB));  // MMA_N
  CUTE_STATIC_ASSERT_V(size<2>(tCrA) == size<2>(tXrA));  // MMA_K

  int smem_pipe_read = 0;
  int smem_pipe_write = K_PIPE_MAX - 1;
  Tensor tXsA_p = tXsA(_, _, _, smem_pipe_read);
  Tensor tXsB_p = tXsB(_, _, _, smem_pipe_read);
  constexpr int K_BLOCK_MAX = size<2>(decltype(tCrA){});  // 64 / 16 = 4 k-blocks per k-tile

  // Prefetch the first k-block of the first k-tile into registers.
  if (K_BLOCK_MAX > 1) {
    cp_async_wait<K_PIPE_MAX - 2>();
    __syncthreads();
    copy(SmemCopyAtomA{}, tXsA_p(_, _, Int<0>{}), tXrA(_, _, Int<0>{}));
    copy(SmemCopyAtomB{}, tXsB_p(_, _, Int<0>{}), tXrB(_, _, Int<0>{}));
  }

  // Mainloop. Runs exactly K/kBK iterations; once the real k-tiles are exhausted the gmem copies
  // re-load the last k-tile into the free stage (harmless, keeps the group count uniform).
  CUTE_NO_UNROLL
  while (k_tile_count > -(K_PIPE_MAX - 1)) {
    CUTE_UNROLL
    for (int k_block = 0; k_block < K_BLOCK_MAX; ++k_block) {
      if (k_block == K_BLOCK_MAX - 1) {
        // Move to the next smem stage: wait for its cp.async group, and make sure every warp
        // is done reading the stage that the next gmem copy will overwrite.
        tXsA_p = tXsA(_, _, _, smem_pipe_read);
        tXsB_p = tXsB(_, _, _, smem_pipe_read);
        cp_async_wait<K_PIPE_MAX - 2>();
        __syncthreads();
      }
      // smem -> rmem for k_block + 1 (wraps to the next stage's first k-block).
      const int k_block_next = (k_block + 1) % K_BLOCK_MAX;
      copy(SmemCopyAtomA{}, tXsA_p(_, _, k_block_next), tXrA(_, _, k_block_next));
      copy(SmemCopyAtomB{}, tXsB_p(_, _, k_block_next), tXrB(_, _, k_block_next));
      if (k_block == 0) {
        // gmem -> smem for the k-tile kStages-1 ahead.
        copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, smem_pipe_write));
        copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, smem_pipe_write));
        cp_async_fence();
        --k_tile_count;
        if (k_tile_count > 0) ++k_tile_next;
        smem_pipe_write = smem_pipe_read;
        smem_pipe_read = (smem_pipe_read == K_PIPE_MAX - 1) ? 0 : smem_pipe_read + 1;
      }
      gemm(mma, tCrA(_, _, k_block), tCrB(_, _, k_block), tCrC);
    }
  }
  cp_async_wait<0>();  // drain the redundant tail copies before the CTA retires

  // Epilogue: coordinates of every accumulator, bias + ReLU in fp32, bf16x2 stores.
  Tensor cC = make_identity_tensor(shape(mC));                               // (M,N) -> (m,n)
  Tensor gcC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});      // (BM,BN)
  Tensor tCcC = thr_mma.partition_C(gcC);                                     // like tCgC
  CUTE_STATIC_ASSERT_V(size<0>(tCrC) == Int<4>{});
  CUTE_STATIC_ASSERT_V((stride<0, 0>(tCgC) == Int<1>{}));
  CUTE_UNROLL
  for (int m = 0; m < size<1>(tCrC); ++m) {
    CUTE_UNROLL
    for (int n = 0; n < size<2>(tCrC); ++n) {
      CUTE_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int col = get<1>(tCcC(make_coord(0, h), m, n));  // global column of the pair's first value
        const float b0 = float(bias[col]), b1 = float(bias[col + 1]);
        const float v0 = fmaxf(tCrC(make_coord(0, h), m, n) + b0, 0.f);
        const float v1 = fmaxf(tCrC(make_coord(1, h), m, n) + b1, 0.f);
        *reinterpret_cast<__nv_bfloat162*>(&tCgC(make_coord(0, h), m, n)) = __floats2bfloat162_rn(v0, v1);
      }
    }
  }
}

inline bool is_bf16(const DLTensor& t) {
  return t.dtype.code == kDLBfloat && t.dtype.bits == 16 && t.dtype.lanes == 1;
}

inline bool is_row_major_2d(const DLTensor& t) {
  if (t.ndim != 2) return false;
  if (t.strides == nullptr) return true;  // DLPack: NULL strides means compact row-major
  return t.strides[1] == 1 && t.strides[0] == t.shape[1];
}

}  // namespace gemm_bias_relu_impl

using namespace gemm_bias_relu_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 3 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& a = inputs[0];
  const DLTensor& b = inputs[1];
  const DLTensor& bias_t = inputs[2];
  const DLTensor& c = outputs[0];
  if (!is_bf16(a) || !is_bf16(b) || !is_bf16(bias_t) || !is_bf16(c)) return cudaErrorInvalidValue;
  if (!is_row_major_2d(a) || !is_row_major_2d(b) || !is_row_major_2d(c)) {
    return cudaErrorInvalidValue;
  }
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K || c.shape[0] != M || c.shape[1] != N) return cudaErrorInvalidValue;
  if (cutegen_numel(bias_t) != N) return cudaErrorInvalidValue;
  // Tile divisibility (no predication in this kernel).
  if (M <= 0 || N <= 0 || K <= 0 || M % kBM != 0 || N % kBN != 0 || K % kBK != 0) {
    return cudaErrorInvalidValue;
  }
  // 32-bit index arithmetic inside the kernel; grid.y limit.
  const int64_t kMax = 0x7fffffff;
  if (M * K > kMax || K * N > kMax || M * N > kMax || N / kBN > 65535) {
    return cudaErrorInvalidValue;
  }
  const Element* A = cutegen_data<const Element>(a);
  const Element* B = cutegen_data<const Element>(b);
  Element* C = cutegen_data<Element>(c);
  if (reinterpret_cast<uintptr_t>(A) % 16 || reinterpret_cast<uintptr_t>(B) % 16 ||
      reinterpret_cast<uintptr_t>(C) % 16) {
    return cudaErrorInvalidValue;  // cp.async 16-byte accesses need aligned bases
  }

  cudaError_t err = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         kSmemBytes);
  if (err != cudaSuccess) return (int)err;
  dim3 grid(unsigned(M / kBM), unsigned(N / kBN));
  gemm_kernel<<<grid, kThreads, kSmemBytes, stream>>>(A, B, cutegen_data<const Element>(bias_t), C, int(M),
                                                       int(N), int(K));
  return (int)cudaGetLastError();
}
