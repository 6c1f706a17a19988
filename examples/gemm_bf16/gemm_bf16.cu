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
//    (stmatrix) -> TMA store. No C operand (ElementC = void): D = A @ B. For the 128 x 256 kernel the stores are
//    made per consumer warpgroup (WarpgroupStores<4>, examples/idioms/gemm_sm90_warpgroup_epilogue.cuh, as cuBLAS
//    stores): each warpgroup writes its 64 rows of a 128 x 32 subtile to its half of one of four 8 KB buffers and
//    issues its own TMA store, kept in step by its own 128 threads, where CUTLASS's epilogue stops both warpgroups
//    twice per subtile at a 256-thread barrier and waits for the previous subtile's store. 2026-12-07 (H100,
//    graph replays with a flush against the best cuBLAS; the old epilogue built beside it as
//    coop_128x256_c2x1_sw1_even): 1.011x [0.990, 1.043] where the old read 0.995x (2 processes x 5 blocks), and
//    0.997x [0.979, 1.019] against 0.987x (3 x 5); at the power cap 668 TFLOP/s against 662, cuBLAS 676. Built
//    as this kernel (its six GPU tests pass): 1.001x [0.911, 1.007] against the old epilogue's 0.984x (2 x 5). At
//    cuBLAS's median, not above it in every block.
//  * Every other tile's k-loop walked backwards (AlternatingK, examples/idioms/gemm_sm90_alternating_k.cuh): a CTA's
//    n-th tile is in the n-th wave, so each wave starts at the end of k where the last one finished, on the B panels
//    L2 still holds. At 4096^3 the call reads 128 MB from HBM instead of 168 (cuBLAS 150), and at the power cap,
//    where every 4096^3 kernel here runs, the saved energy is clock: sustained 680 TFLOP/s at 1410 MHz where the
//    same kernel walking k forwards ran 668 at 1380 (cuBLAS 671-676). 2026-12-07 (H100, five calls, 18
//    processes x 10 blocks, against the best cuBLAS; the median and the 95 % interval of the median of the
//    per-process medians, harness/intervals.py): per call after a flush and a pad 1.004x [1.002, 1.004], graph
//    replays with a flush 1.006x [1.003, 1.008], back to back 1.004x [1.000, 1.011]; the forward twin beside it
//    (15 processes) 0.998x, 1.001x and 1.004x. Ahead of cuBLAS by the flush methods' intervals (issue 24's target),
//    by 0.4-0.6 %: single blocks still fall either side of 1.0.
//  * Small and medium GEMMs: the 128 x 256 tile is the fastest per SM, but a persistent kernel pays for whole waves of
//    tiles (1.1 waves cost 2), and below a wave it leaves SMs idle. So the launcher picks, per call, whichever of
//    six kernels has the least estimated time, waves x tile area / throughput per SM
//    (cutegen_sm90_gemm::launch_cheapest): 128 x 256 (cluster 2x1), 128 x 192 (cluster 2x1), 128 x 128 (cooperative,
//    no cluster), 64 x 128 (KernelTmaWarpSpecialized: one consumer warpgroup, one CTA per tile), 192 x 96
//    (ping-pong, cluster 2x1: cuBLAS's tile at 1536^3) and, for few tiles with a long k-loop, 128 x 64 with each
//    tile's k-loop split in 8 pieces added in arrival order (SplitK: only where the pieces fit one wave; the sum's
//    bits may differ between calls there, and only there). On 132 SMs: 512^3-1024^3 run 64 x 128, 256x512x8192 the
//    split kernel, 1280^3 128 x 128, 1536^3 192 x 96, 3072^3 128 x 192, 2048^3 and 4096^3 128 x 256. Each kernel
//    keeps its own last launch (LastLaunch; the split kernel's workspace is set up anew every call).
//  * Even waves (LaunchOptions::even_waves): a persistent grid on the fewest SMs that keep its number of waves. At
//    4096^3, 512 tiles make 4 waves on 132 SMs or on 128; on 128, four SMs idle the whole call instead of sixteen in
//    the last wave. Sustained, every 4096^3 kernel here and cuBLAS's run at the card's power cap (H100: ~698 W, the SM
//    clock pulled from 1980 to ~1380 MHz, bench/gemm_timing_methods.py --clocks), so idle SMs leave the busy ones
//    power. It never adds a wave; measured against the same kernel on every SM it moved the medians by -0.3 to
//    +0.5 % at 4096^3 (seven of nine comparisons up, one level) and not at all at 3072^3: kept for the mechanism,
//    not a figure.
// Requirements (else cudaErrorInvalidValue): contiguous row-major bf16, K % 8 == 0 and N % 8 == 0 (TMA's
// 16-byte row pitches; KernelBench's 8_irregular, K = 2949 and N = 5921, is refused, not padded), 16-byte
// aligned base pointers, sm_90a. M, N, K need not divide the tile (TMA bounds-checks loads and stores).
// Launch: on the caller's stream, no synchronization; the workspace is allocated once and cached.
// Measured (bench/gemm_timing_methods.py, H200, 2026-12-06: 4 processes x 5 blocks, each round in a random order,
// 4096^3, against the faster of torch.matmul and torch.matmul(out=) in each block; median [min, max] over the 20
// blocks; this schedule built as the candidate coop_128x256_c2x1_sw1): per call after an L2 flush and a 200 us pad
// 0.984x [0.950, 1.020], as CUDA-graph replays with a flush 0.985x [0.961, 1.000], back to back 0.986x [0.955, 1.006]
// (about 710 TFLOP/s; cuBLAS runs nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT, named in its column-major frame:
// in torch's it is this 128x256 tile with B multicast over a 2x1 cluster, issuing the same TMA loads, per
// bench/gemm_sass.py): at parity, within 1.5 %, not faster.
// 2026-12-06 (graph replays with a flush against the best cuBLAS, 2 processes x 5 blocks): this kernel 0.987x
// [0.970, 1.001] (H100) and 0.993x [0.970, 1.001] (H200); cuBLAS's own schedule in cuBLAS's frame, D^T = B^T A^T
// (the shared header's TransposedFrame), 0.989x [0.966, 1.000] (H100); CuTe's TMA loads without their L2 cache
// policy, as cuBLAS issues them, 0.997x beside 0.996x with it (H200). cuBLAS's lead in L2 reads is L2's request
// coalescer serving reads that several SMs make at once: 248 MB of them per call against this kernel's 73
// (bench/gemm_traffic.py); none of the frames, policies or tile orders tried here lines SMs up like that.
// 2026-12-07 (H100, 2 processes x 5 blocks): this kernel 0.988x [0.973, 0.996] the best cuBLAS. Its schedule
// with every CTA's producer issuing each k-step's loads together (examples/idioms/gemm_sm90_lockstep.cuh) gets 195 MB
// of such merged reads (cuBLAS 225) and runs 0.653x: SMs asking at once is what merges reads; a grid barrier is not
// how cuBLAS gets there. cuBLAS's own listing shows how: after two cluster tiles by launch index, its clusters take
// tiles from a global counter as they finish, so clusters that finish together start adjacent tiles together
// (bench/gemm_sass.py); this kernel's scheduler is static.
// Per call without the pad 0.866x [0.800, 0.983]: there the host's work per call shows. On an H100 (2026-12-06, 3
// processes x 5 blocks, in three calls) the padded, graph and back-to-back medians read 0.973-0.985x [0.944, 1.028];
// there the same tile without a cluster read 0.973-0.984x and 256x128 with a 1x2 cluster 0.977-0.984x.
// The launcher now relaunches the last call's parameters when the same tensors recur: 1.135x [1.109, 1.197] the calls
// per second of the rebuild-every-call launcher at 512^3 back to back (host-bound), 1.000x at 4096^3. (At 512^3 this
// tile leaves most SMs idle: 0.46-0.58x cuBLAS's 64x48 nvjet kernel.) The first four kernels, each timed alone as a
// candidate (H100, 2026-12-06, graph replays with a flush against the best cuBLAS, one process x 5 blocks per shape;
// bench/gemm_timing_methods.py --shape, gpu-check.sh gemm-shapes): 512^3 64x128 0.894x (128x256 alone: 0.454x);
// 1024^3 64x128 0.999x (0.460x); 1280^3 128x128 0.918x (64x128 0.725x, 128x256 0.573x); 1536^3 128x192 0.817x
// (128x256 0.645x); 3072^3 128x192 0.976x (128x256 0.752x); 2048^3 128x256 0.957x (64x128 0.620x); 256x512x8192
// 64x128 0.600x (cuBLAS splits k there; stream-K 128x128 read 0.284x). At each of these shapes the cost model picks
// the fastest kernel timed there (at 512^3 within 1 % of a 64x64 ping-pong). The flagship itself (H100, the same
// method, its 128x256 kernel alone after the slash): 512^3 0.907x [0.882, 0.917] / 0.460x, 1280^3 0.917x [0.901,
// 0.928] / 0.569x, 1536^3 0.813x [0.809, 0.832] / 0.673x (cuBLAS's 192x96 tiles make one wave there), 3072^3 0.977x
// [0.973, 0.978] / 0.753x, 4096^3 0.990x [0.987, 1.013] / 0.988x. For 4096^3 (the 128x256 kernel): swizzle
// 8 measured the same (1.001-1.005x this kernel, every interval holding 1.0), a 128x64 epilogue the same. In
// an earlier fixed-order run (where the place in the order moved ratios by up to 5 %): forced stream-K 0.93-0.97x
// (shuffled, H100: 0.935-0.947x), a 2x2 cluster 0.74-0.84x, a smem-free epilogue 0.72-0.83x; a programmatic dependent
// launch gained nothing measurable (H100). Earlier leads of 1.02-1.05x came from that fixed order, and an earlier 1.12x
// from a cuBLAS run at 667 TFLOP/s.
// 2026-12-06 (H100; graph replays with a flush against the best cuBLAS, median [min, max] of 5 blocks
// per process): 1536^3 0.893x [0.883, 0.901] with the 192x96 kernel, where the 128x192 kernel alone read 0.814x (192x96
// alone 0.888x; at 1280^3 it read 0.619x, where 128x128 keeps 0.925x); 3072^3 0.974x [0.971, 0.987] (128x192 without
// even waves 0.975x); 4096^3, 2 processes x 5 blocks, in three calls: 0.990x [0.966, 1.042], 0.989x [0.967, 1.020],
// 0.987x [0.956, 1.001] (the same 128x256 kernel on every SM beside it: 0.987x, 0.986x; even waves moved the 4096^3
// medians by -0.3 to +0.5 % over three methods: within the blocks' spread) -- still not above 1.0. Sustained (4 s back
// to back, twice), every kernel sits at the power cap with reason 0x4: cuBLAS 670-675 TFLOP/s at 1395 MHz, this kernel
// 656-660 at 1365-1380 MHz: the same TFLOP/s per MHz (0.478-0.484), so the last 1-2 % is energy per FLOP, not
// instructions. Per call (bench/gemm_traffic.py, ncu) this kernel reads 168 MB from HBM and moves 1201-1205 MB through
// L2 where cuBLAS reads 150 and moves 1031-1038; swizzle 8 cuts HBM reads to 133 MB, not L2's bytes (1177), and times
// 0.990x by graph replay (within noise of swizzle 1). A 4x1 cluster (B multicast to four CTAs) runs 0.80x: fewer 4-CTA
// clusters fit than 128 SMs' worth, so 5 waves (its clock rose to 1695 MHz).
// 2026-12-06 (H100). L2's bytes by source (bench/gemm_traffic.py, ncu, one call, twice): cuBLAS
// launches what this kernel launches (2-CTA clusters, 384 threads, 168 registers, ~214 KB smem; 132 CTAs to 128) and
// delivers the same 1610.6 MB to the SMs, but its SMs ask L2 for 847-849 MB where this kernel's ask for 1022-1030
// (0.83x); the fabric between L2's partitions carries 148-152 MB to 177-181. CUTLASS's swizzles do not close it
// (swizzle 8: 1010 MB; 132 SMs: 1038). 256x512x8192, graph replay against the best cuBLAS (64x64 split-K and a
// separate reduction kernel): 64x128 (this kernel's pick until now) 0.609-0.620x; 128x128 in 8 pieces added in a
// fixed order 0.470-0.481x, in 16 0.298x; in arrival order 0.757x [0.741, 0.791]; 128x64 in 8 pieces, arrival order,
// 0.861x [0.818, 0.876] in that call -- now the sixth choice.
// 2026-12-06 (H100, one process x 5 blocks a call, graph replay against the best cuBLAS): this kernel at
// 256x512x8192 picks the split kernel and reads 0.769x [0.753, 0.792], 0.775x [0.750, 0.797] and 0.836x [0.825, 0.855]
// in three calls (the split candidate beside it 0.760x, 0.786x, 0.831x; 64x128 unsplit 0.580x, 0.625x in the last two):
// the last session's 0.861x for the same kernel did not reproduce as a figure; the gain over 64x128 is 1.34x in both
// calls that timed the two. Back to back it launches a kept Params with its workspace zeroed (see LastLaunch). Its six
// GPU tests pass (the split one relaunched with new values too). At 4096^3, two calls of 2 processes x 5 blocks: 0.999x
// [0.970, 1.011] and 0.988x [0.965, 1.003] -- still not above 1.0. A tile order of our own did not help (see
// examples/idioms/gemm_sm90_grouped_tiles.cuh: the SMs' L2 requests do not follow the order).
// The replaced sm80 mma.sync kernel ran 451 TFLOP/s = 0.58x cuBLAS at 4096^3 (H200,
// 2026-11-29); it lives on as examples/idioms/gemm_sm80_mma_sync.
#include "../idioms/gemm_sm90_common.cuh"

namespace gemm_bf16_impl {
using namespace cute;
using cutegen_sm90_gemm::Sm90Gemm;
using Cooperative = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using CooperativeEpilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
using Persistent = cutlass::gemm::PersistentScheduler;
// The large GEMMs' kernel (4096^3 and the like): see Design above. Spelled out, not through the aliases:
// bench/gemm_rungs.py copies these template arguments into its candidates, which have no aliases.
using Gemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _256, _64>, Shape<_2, _1, _1>,
                                         cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                         cutlass::epilogue::TmaWarpSpecializedCooperative,
                                         cutlass::gemm::PersistentScheduler,
                                         cutlass::epilogue::collective::EpilogueTileAuto,
                                         cutegen_sm90_gemm::RowMajorFrame, cutegen_sm90_gemm::AlternatingK,
                                         cutegen_sm90_gemm::WarpgroupStores<4>>::Gemm;
// Smaller tiles for shapes whose 128x256 tiles fill their last wave badly or leave SMs idle (see Small and
// medium GEMMs above).
// 128x192 stores per warpgroup too (three buffers: six 128x32 subtiles a tile), as bench/gemm_rungs.py's
// wgstore3_128x192_c2x1: at 3072^3 0.990x the best cuBLAS where it read 0.975x with CUTLASS's epilogue (H100), and
// walks every other tile backwards, as altk_wgstore3_128x192_c2x1_even: HBM reads 49.6 MB a 3072^3 call against
// 61.6, graph replays 1.004x [1.002, 1.005] against 1.000x walking forwards (H100, 3 processes x 10 blocks).
using Gemm128x192 = Sm90Gemm<Shape<_128, _192, _64>, Shape<_2, _1, _1>, Cooperative, CooperativeEpilogue, Persistent,
                             cutlass::epilogue::collective::EpilogueTileAuto, cutegen_sm90_gemm::RowMajorFrame,
                             cutegen_sm90_gemm::AlternatingK, cutegen_sm90_gemm::WarpgroupStores<3>>::Gemm;
using Gemm128x128 =
    Sm90Gemm<Shape<_128, _128, _64>, Shape<_1, _1, _1>, Cooperative, CooperativeEpilogue, Persistent>::Gemm;
using Gemm64x128 = Sm90Gemm<Shape<_64, _128, _64>, Shape<_1, _1, _1>, cutlass::gemm::KernelTmaWarpSpecialized,
                            cutlass::epilogue::TmaWarpSpecialized>::Gemm;
// cuBLAS's tile at 1536^3 (128 tiles: one wave on 128 SMs). A ping-pong kernel: 96 rows are no multiple of the
// cooperative schedule's two 64-row warpgroups, so one warpgroup owns the whole tile (3 m64n96 wgmmas a k-step).
using Gemm192x96 = Sm90Gemm<Shape<_192, _96, _64>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                            cutlass::epilogue::TmaWarpSpecialized, Persistent>::Gemm;
// Few tiles and a long k-loop (256x512x8192: 16 tiles of 64x128 leave 116 SMs idle): 128x64 tiles, each k-loop
// cut into 8 pieces added in arrival order (so its bits may differ between calls; see SplitK). Picked only where
// its pieces fit one wave and the k-loop is long enough to pay for the pieces' adding (kSplitPieceK below).
using Gemm128x64Split = Sm90Gemm<Shape<_128, _64, _64>, Shape<_1, _1, _1>, Cooperative, CooperativeEpilogue,
                                 cutlass::gemm::StreamKScheduler>::Gemm;
// Throughput per SM relative to the 128x256 kernel's, from the H100 runs above (TFLOP/s x waves x SMs / tiles);
// 192x96's from 1536^3, where it took 0.91x the time of 128x192 timed beside it (one warpgroup of two busy per SM
// in a single wave: it wins only where its waves are fewer); the split kernel's taken as 64x128's, the tiles being
// the same size (its pieces' cost is kSplitPieceK, fitted with that).
constexpr std::array<double, 6> kEfficiency{1.00, 0.98, 0.85, 0.60, 0.81, 0.60};
// The k-loop each of the split kernel's pieces costs on top of its 1/8 of K, in k elements: at 256x512x8192 on the
// H100 it took 0.72x the time of 64x128 unsplit (2026-12-06, graph replay; 0.74x and 0.75x in two calls of
// the fourteenth: 5000-5100, the same choices), and 1/8 + 4900 / 8192 = 0.72.
constexpr int kSplitPieceK = 4900;
// Every kernel on the fewest SMs that keep its number of waves (even_waves; the other options their defaults).
constexpr cutegen_sm90_gemm::LaunchOptions kOptions{1, cutegen_sm90_gemm::RasterOrder::Heuristic,
                                                    cutegen_sm90_gemm::Decomposition::Heuristic,
                                                    cutegen_sm90_gemm::Reduction::Deterministic, true, true};
}  // namespace gemm_bf16_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  using namespace gemm_bf16_impl;
  return cutegen_sm90_gemm::launch_cheapest<Gemm, Gemm128x192, Gemm128x128, Gemm64x128, Gemm192x96,
                                            cutegen_sm90_gemm::SplitK<Gemm128x64Split, 8, kSplitPieceK>>(
      inputs, num_inputs, outputs, num_outputs, stream, kEfficiency, kOptions);
}
