// gemm_bf16.cu -- C = A @ B, A (M,K) and B (K,N) bf16 row-major, C (M,N) bf16, fp32 accumulate: the
// project's flagship Hopper GEMM (issue 15: >= 0.90x cuBLAS at 4096^3 on the H200).
//
// Decision: the flagship is built from CUTLASS 3's CuTe collectives, not hand-written --
// gemm::collective::CollectiveBuilder<arch::Sm90, arch::OpClassTensorOp, ...> for the mainloop,
// epilogue::collective::CollectiveBuilder for the epilogue, kernel::GemmUniversal<ProblemShape, Mainloop,
// Epilogue, PersistentScheduler> and device::GemmUniversalAdapter -- because the four steps from a plain
// TMA + WGMMA kernel to cuBLAS speed (multistage mbarrier pipeline, warp-specialized producer/consumer
// warpgroups, persistent tile scheduler, cluster multicast) are each a schedule choice there, and every one
// is measured with the same launcher (examples/idioms/gemm_sm90_common.cuh; the ladder's rungs are
// examples/idioms/gemm_sm80_mma_sync, gemm_sm90_tma_wgmma, gemm_sm90_pipelined, gemm_sm90_warpspecialized,
// gemm_sm90_persistent_cooperative and gemm_sm90_persistent_pingpong; bench/gemm_rungs.py times them all).
//
// Design (the persistent cooperative rung's schedule):
//  * CTA tile 128 x 256 x 64, cluster 2 x 1 x 1: the two CTAs of a cluster (adjacent M tiles) share each B
//    tile through TMA multicast.
//  * KernelTmaWarpSpecializedCooperative: 384 threads = a producer warpgroup (TMA, registers lowered with
//    setmaxnreg) + 2 consumer warpgroups that split the tile's rows (64 x 256 each, wgmma
//    SM90 64x256x16 bf16 -> fp32 from smem descriptors, registers raised). A 4-stage smem ring of
//    GMMA-swizzled A (K-major) and B (N-major) tiles with full/empty mbarriers between them.
//  * PersistentScheduler: one CTA per SM walks the 128 x 256 tiles in swizzled raster order; the producer
//    loads the next tile's k-tiles while the consumers finish the current one.
//  * Epilogue TmaWarpSpecializedCooperative: fp32 accumulators -> bf16 (round to nearest) -> swizzled smem
//    (stmatrix) -> TMA store. No C operand (ElementC = void): D = A @ B.
//  * Small GEMMs: where the 128 x 256 tiles would keep fewer than half the SMs busy (fewer than 66 tiles on 132 SMs:
//    1024^3 makes 32), a second kernel runs instead: 64 x 128 tiles, one CTA each (KernelTmaWarpSpecialized: a
//    producer warp and one consumer warpgroup), four times the CTAs (cutegen_sm90_gemm::fills_half_the_device).
// Requirements (else cudaErrorInvalidValue): contiguous row-major bf16, K % 8 == 0 and N % 8 == 0 (TMA's
// 16-byte row pitches; KernelBench's 8_irregular, K = 2949 and N = 5921, is refused, not padded), 16-byte
// aligned base pointers, sm_90a. M, N, K need not divide the tile (TMA bounds-checks loads and stores).
// Launch: on the caller's stream, no synchronization; the workspace is allocated once and cached.
// Measured (bench/gemm_timing_methods.py, H200, 2026-12-06: 4 processes x 5 blocks, each round in a random order,
// 4096^3, against the faster of torch.matmul and torch.matmul(out=) in each block; median [min, max] over the 20
// blocks; this schedule built as the candidate coop_128x256_c2x1_sw1): per call after an L2 flush and a 200 us pad
// 0.984x [0.950, 1.020], as CUDA-graph replays with a flush 0.985x [0.961, 1.000], back to back 0.986x [0.955, 1.006]
// (about 710 TFLOP/s; cuBLAS runs nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT): at parity, within 1.5 %, not faster.
// Per call without the pad 0.866x [0.800, 0.983]: there the host's work per call shows. On an H100 (2026-12-06, 3
// processes x 5 blocks, in three calls) the padded, graph and back-to-back medians read 0.973-0.985x [0.944, 1.028];
// there the same tile without a cluster read 0.973-0.984x and cuBLAS's geometry (256x128, cluster 1x2) 0.977-0.984x.
// The launcher now relaunches the last call's parameters when the same tensors recur: 1.135x [1.109, 1.197] the calls
// per second of the rebuild-every-call launcher at 512^3 back to back (host-bound), 1.000x at 4096^3. (At 512^3 this
// tile leaves most SMs idle: 0.46-0.58x cuBLAS's 64x48 nvjet kernel.) With the small kernel below half a wave (H100,
// 2026-12-06, graph replays with a flush against the best cuBLAS, one process x 5 blocks): 512^3 0.913x [0.861, 0.960]
// where the large kernel alone read 0.454x, 1024^3 0.986x [0.960, 0.991] (0.460x), 1280^3 0.705x (0.573x); the large
// kernel stays at 1536^3 (0.666x), 2048^3 (0.957x) and 4096^3 (0.985x). Still weak: medium shapes (1280-1536, where
// cuBLAS reaches 425-581 TFLOP/s) and a long k-loop on few tiles (256x512x8192: 0.584x; that wants a split k). Swizzle 8
// measured the same (1.001-1.005x this kernel, every interval holding 1.0), a 128x64 epilogue the same as swizzle 8. In
// an earlier fixed-order run (where the place in the order moved ratios by up to 5 %): forced stream-K 0.93-0.97x
// (shuffled, H100: 0.935-0.947x), a 2x2 cluster 0.74-0.84x, a smem-free epilogue 0.72-0.83x; a programmatic dependent
// launch gained nothing measurable (H100). Earlier leads of 1.02-1.05x came from that fixed order, and an earlier 1.12x
// from a cuBLAS run at 667 TFLOP/s. The replaced sm80 mma.sync kernel ran 451 TFLOP/s = 0.58x cuBLAS at 4096^3 (H200,
// 2026-11-29); it lives on as examples/idioms/gemm_sm80_mma_sync.
#include "../idioms/gemm_sm90_common.cuh"

namespace gemm_bf16_impl {
using namespace cute;
using Gemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _256, _64>, Shape<_2, _1, _1>,
                                         cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                         cutlass::epilogue::TmaWarpSpecializedCooperative,
                                         cutlass::gemm::PersistentScheduler>::Gemm;
// Below half a wave of 128x256 tiles (1024^3 makes 32 for 132 SMs), 64x128 tiles, one CTA each (a producer warp
// and one consumer warpgroup): four times the CTAs. H100, graph replays with a flush, x cuBLAS: at 512^3 0.886x
// against the large kernel's 0.471x, at 1024^3 0.977x against 0.474x; at 2048^3 (128 large tiles) 0.630x
// against the large kernel's 0.974x, so there the large one stays.
using SmallGemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_64, _128, _64>, Shape<_1, _1, _1>,
                                              cutlass::gemm::KernelTmaWarpSpecialized,
                                              cutlass::epilogue::TmaWarpSpecialized>::Gemm;
constexpr cutegen_sm90_gemm::LaunchOptions kOptions{};
}  // namespace gemm_bf16_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  using namespace gemm_bf16_impl;
  cutegen_sm90_gemm::LaunchKey key;
  if (const int err = cutegen_sm90_gemm::describe_launch(inputs, num_inputs, outputs, num_outputs, kOptions, &key);
      err != cudaSuccess) {
    return err;
  }
  return cutegen_sm90_gemm::fills_half_the_device<Gemm>(key, stream) ? cutegen_sm90_gemm::run<Gemm>(key, stream)
                                                                      : cutegen_sm90_gemm::run<SmallGemm>(key, stream);
}
