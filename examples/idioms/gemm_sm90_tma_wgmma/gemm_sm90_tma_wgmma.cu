// gemm_sm90_tma_wgmma.cu -- C = A @ B on Hopper with TMA loads and WGMMA, bf16 in/out, fp32 accumulate.
// A (M,K) and B (K,N) row-major, C (M,N) row-major (KernelBench matmul in bf16, 4096^3).
//
// Idiom (after CuTe's tutorial examples/cute/tutorial/hopper/wgmma_tma_sm90.cu; correct first, not tuned):
//  * CTA tile 128 x 128 x 64, 4-stage shared-memory ring filled by TMA (SM90_TMA_LOAD), one mbarrier
//    per stage for "TMA landed" (transaction bytes) and one for "all consumers done with the stage".
//  * Operands in CuTe's (M,K) / (N,K) convention: A is K-major; row-major B seen as (N,K) has stride
//    (1,N), i.e. MN-major. The smem layouts are the GMMA swizzle atoms for those majors
//    (Layout_K_SW128_Atom / Layout_MN_SW128_Atom), tiled to (BM,BK,STAGES) / (BN,BK,STAGES); the TMA
//    atoms are built from exactly these layouts, so the copies write what the wgmma descriptors read.
//  * TiledMMA: SM90_64x128x16_F32BF16BF16_SS<K, MN> on 2 warpgroups (256 threads, 64 rows each).
//    The A/B "fragments" are smem descriptors: no smem -> register copies.
//  * One elected thread is the producer: it waits until a stage is free, arms its barrier with the
//    stage's byte count and issues the two TMA copies. Every thread consumes: wait for the stage,
//    warpgroup_arrive / gemm / commit / wait, then arrive on the stage's consumer barrier.
//  * Epilogue: fp32 accumulators -> bf16, stored straight from registers (unpredicated).
// Requirements (else cudaErrorInvalidValue): M, N % 128 == 0, K % 64 == 0, contiguous row-major,
// 16-byte aligned base pointers. Build for sm_90a (wgmma): -gencode arch=compute_90a,code=sm_90a.
#include <cutegen/abi.h>

// make_tma_atom (host code) calls CuTe's constexpr tuple helpers, which nvcc flags with warning
// #20013-D / #20015-D unless --expt-relaxed-constexpr is given. It is CuTe-internal and harmless on the host path.
#pragma nv_diag_suppress 20013
#pragma nv_diag_suppress 20015
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000 && !defined(CUTE_ARCH_MMA_SM90A_ENABLED)
#error "this kernel uses wgmma: build with -gencode arch=compute_90a,code=sm_90a"
#endif

namespace gemm_sm90_impl {

using namespace cute;
using Element = cute::bfloat16_t;

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 64;
constexpr int kStages = 4;
constexpr int kThreads = 256;  // 2 warpgroups

using SmemLayoutA = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{},
                                           make_shape(Int<kBM>{}, Int<kBK>{}, Int<kStages>{})));
using SmemLayoutB = decltype(tile_to_shape(GMMA::Layout_MN_SW128_Atom<Element>{},
                                           make_shape(Int<kBN>{}, Int<kBK>{}, Int<kStages>{})));
using TiledMma = decltype(make_tiled_mma(SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::MN>{},
                                         Layout<Shape<_2, _1, _1>>{}));
static_assert(decltype(size(TiledMma{}))::value == kThreads);

struct SharedStorage {
  alignas(1024) cute::ArrayEngine<Element, cosize_v<SmemLayoutA>> A;
  alignas(1024) cute::ArrayEngine<Element, cosize_v<SmemLayoutB>> B;
  alignas(8) uint64_t full[kStages];   // TMA -> consumers: the stage has landed
  alignas(8) uint64_t empty[kStages];  // consumers -> producer: the stage may be overwritten
};
constexpr int kSmemBytes = int(sizeof(SharedStorage));
constexpr int kStageBytes = (kBM + kBN) * kBK * int(sizeof(Element));  // what one stage's TMAs deliver

template <class TmaA, class TmaB>
__global__ void __launch_bounds__(kThreads, 1)
gemm_kernel(__grid_constant__ TmaA const tma_a, __grid_constant__ TmaB const tma_b, Element* C,
            int M, int N, int K) {
  using FullBarrier = cutlass::arch::ClusterTransactionBarrier;
  using EmptyBarrier = cutlass::arch::ClusterBarrier;

  Tensor mA = tma_a.get_tma_tensor(make_shape(M, K));                                  // (M,K)
  Tensor mB = tma_b.get_tma_tensor(make_shape(N, K));                                  // (N,K)
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));  // (M,N)

  auto cta_tiler = make_shape(Int<kBM>{}, Int<kBN>{}, Int<kBK>{});
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)

  extern __shared__ char smem_buf[];
  SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(smem.A.begin()), SmemLayoutA{});  // (BM,BK,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem.B.begin()), SmemLayoutB{});  // (BN,BK,PIPE)

  // TMA partitions: mode 0 is what one TMA instruction moves (a whole (BM,BK) tile), no multicast.
  auto [tAgA, tAsA] = tma_partition(tma_a, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sA),
                                    group_modes<0, 2>(gA));  // (TMA,k), (TMA,PIPE)
  auto [tBgB, tBsB] = tma_partition(tma_b, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sB),
                                    group_modes<0, 2>(gB));  // (TMA,k), (TMA,PIPE)
  constexpr int kTxBytes = sizeof(make_tensor_like(tensor<0>(tAsA))) + sizeof(make_tensor_like(tensor<0>(tBsB)));
  static_assert(kTxBytes == kStageBytes, "TMA transaction bytes must equal what the copies deliver");

  const int warp = threadIdx.x / 32;
  const bool producer = (warp == 0) && cute::elect_one_sync();
  if (producer) {
    CUTE_UNROLL
    for (int s = 0; s < kStages; ++s) {
      FullBarrier::init(&smem.full[s], 1);
      EmptyBarrier::init(&smem.empty[s], kThreads);
    }
  }
  cutlass::arch::fence_barrier_init();
  __syncthreads();

  const int k_tiles = size<1>(tAgA);
  int k_load = 0;  // next k-tile to load
  if (producer) {
    for (int s = 0; s < kStages && k_load < k_tiles; ++s, ++k_load) {
      FullBarrier::arrive_and_expect_tx(&smem.full[s], kTxBytes);
      copy(tma_a.with(smem.full[s]), tAgA(_, k_load), tAsA(_, s));
      copy(tma_b.with(smem.full[s]), tBgB(_, k_load), tBsB(_, s));
    }
  }

  TiledMma mma;
  ThrMMA thr_mma = mma.get_thread_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);        // (MMA,MMA_M,MMA_K,PIPE)
  Tensor tCsB = thr_mma.partition_B(sB);        // (MMA,MMA_N,MMA_K,PIPE)
  Tensor tCgC = thr_mma.partition_C(gC);        // (MMA,MMA_M,MMA_N)
  Tensor tCrA = thr_mma.make_fragment_A(tCsA);  // smem descriptors
  Tensor tCrB = thr_mma.make_fragment_B(tCsB);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);  // fp32 accumulators
  clear(tCrC);

  auto read_state = cutlass::PipelineState<kStages>();   // stage index + phase bit, flips on wrap
  auto write_state = cutlass::PipelineState<kStages>();
  for (int k = 0; k < k_tiles; ++k) {
    const int stage = read_state.index();
    FullBarrier::wait(&smem.full[stage], read_state.phase());

    warpgroup_fence_operand(tCrC);
    warpgroup_arrive();
    gemm(mma, tCrA(_, _, _, stage), tCrB(_, _, _, stage), tCrC);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(tCrC);

    EmptyBarrier::arrive(&smem.empty[stage]);
    ++read_state;

    if (producer && k_load < k_tiles) {
      const int ws = write_state.index();
      EmptyBarrier::wait(&smem.empty[ws], write_state.phase());  // every consumer left stage ws
      FullBarrier::arrive_and_expect_tx(&smem.full[ws], kTxBytes);
      copy(tma_a.with(smem.full[ws]), tAgA(_, k_load), tAsA(_, ws));
      copy(tma_b.with(smem.full[ws]), tBgB(_, k_load), tBsB(_, ws));
      ++write_state;
      ++k_load;
    }
  }

  // Epilogue: fp32 -> bf16 from registers.
  CUTE_UNROLL
  for (int i = 0; i < size(tCrC); ++i) tCgC(i) = Element(tCrC(i));
}

inline bool is_bf16(const DLTensor& t) {
  return t.dtype.code == kDLBfloat && t.dtype.bits == 16 && t.dtype.lanes == 1;
}

inline bool is_row_major_2d(const DLTensor& t) {
  if (t.ndim != 2) return false;
  if (t.strides == nullptr) return true;
  return t.strides[1] == 1 && t.strides[0] == t.shape[1];
}

}  // namespace gemm_sm90_impl

using namespace gemm_sm90_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& a = inputs[0];
  const DLTensor& b = inputs[1];
  const DLTensor& c = outputs[0];
  if (!is_bf16(a) || !is_bf16(b) || !is_bf16(c)) return cudaErrorInvalidValue;
  if (!is_row_major_2d(a) || !is_row_major_2d(b) || !is_row_major_2d(c)) return cudaErrorInvalidValue;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K || c.shape[0] != M || c.shape[1] != N) return cudaErrorInvalidValue;
  if (M <= 0 || N <= 0 || K <= 0 || M % kBM || N % kBN || K % kBK) return cudaErrorInvalidValue;
  if (M * K > 0x7fffffff || K * N > 0x7fffffff || M * N > 0x7fffffff || N / kBN > 65535) {
    return cudaErrorInvalidValue;
  }
  const Element* A = cutegen_data<const Element>(a);
  const Element* B = cutegen_data<const Element>(b);
  Element* C = cutegen_data<Element>(c);
  if (reinterpret_cast<uintptr_t>(A) % 16 || reinterpret_cast<uintptr_t>(B) % 16 ||
      reinterpret_cast<uintptr_t>(C) % 16) {
    return cudaErrorInvalidValue;  // TMA needs 16-byte aligned global addresses
  }

  // TMA descriptors embed the global addresses: built for every call (cheap, host only).
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(int(M), int(K)), make_stride(int(K), Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(int(N), int(K)), make_stride(Int<1>{}, int(N)));
  auto tma_a = make_tma_atom(SM90_TMA_LOAD{}, mA, SmemLayoutA{}(_, _, 0), make_shape(Int<kBM>{}, Int<kBK>{}));
  auto tma_b = make_tma_atom(SM90_TMA_LOAD{}, mB, SmemLayoutB{}(_, _, 0), make_shape(Int<kBN>{}, Int<kBK>{}));

  auto kernel = gemm_kernel<decltype(tma_a), decltype(tma_b)>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return (int)err;
  dim3 grid(unsigned(M / kBM), unsigned(N / kBN));
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(tma_a, tma_b, C, int(M), int(N), int(K));
  return (int)cudaGetLastError();
}
