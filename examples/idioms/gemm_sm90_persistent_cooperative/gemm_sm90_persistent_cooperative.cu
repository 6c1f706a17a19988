// gemm_sm90_persistent_cooperative.cu -- rung 4a of the Hopper GEMM ladder: persistent cooperative warp-specialized kernel.
// cutegen: problem=../../gemm_bf16/gemm_bf16.py   (the same bf16 GEMM problem as the flagship)
// C = A @ B, A (M,K) and B (K,N) bf16 row-major, C (M,N) bf16, fp32 accumulate (KernelBench matmul in bf16).
//
// Built from CUTLASS 3's CuTe collectives through ../gemm_sm90_common.cuh (CollectiveBuilder mainloop and
// epilogue, kernel::GemmUniversal, device::GemmUniversalAdapter); this file is only the schedule choice:
//  * Schedule cutlass::gemm::KernelTmaWarpSpecializedCooperative + cutlass::gemm::PersistentScheduler:
//    one CTA per SM (grid sized from the SM count and cluster occupancy) loops over 128x256 tiles in
//    swizzled raster order; the producer warpgroup runs ahead into the next tile's k-tiles while the
//    consumers finish the current one, so the pipeline never drains between tiles.
//  * Cooperative: both consumer warpgroups work on the same 128x256 tile (64 rows each, 128 fp32
//    accumulators per thread), which halves the B traffic per flop against 128x128.
//  * Cluster 2x1: the two CTAs of a cluster share each B tile by TMA multicast (one L2 read, two SMs).
//  * Epilogue: TmaWarpSpecializedCooperative, registers -> swizzled smem -> TMA store.
// Requirements: see gemm_sm90_common.cuh (K % 8 == 0, N % 8 == 0, 16-byte aligned bases, sm_90a).
// Measured (bench/gemm_rungs.py, H200, 2026-12-01, interleaved with torch.matmul in one process): 728 TFLOP/s at bf16 4096^3, 728 TFLOP/s at 2048x4096x8192 (x cuBLAS withdrawn: that run's cuBLAS read 667 TFLOP/s, 15 % under its interleaved 783).
#include "../gemm_sm90_common.cuh"

namespace gemm_sm90_persistent_cooperative_impl {
using namespace cute;
using Gemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _256, _64>, Shape<_2, _1, _1>,
                                  cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                  cutlass::epilogue::TmaWarpSpecializedCooperative,
                                  cutlass::gemm::PersistentScheduler>::Gemm;
}  // namespace gemm_sm90_persistent_cooperative_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  return cutegen_sm90_gemm::launch<gemm_sm90_persistent_cooperative_impl::Gemm>(inputs, num_inputs, outputs, num_outputs, stream);
}
