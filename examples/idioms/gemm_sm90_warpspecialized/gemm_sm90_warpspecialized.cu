// gemm_sm90_warpspecialized.cu -- rung 3 of the Hopper GEMM ladder: warp-specialized producer/consumer warpgroups (KernelTmaWarpSpecialized).
// cutegen: problem=../../gemm_bf16/gemm_bf16.py   (the same bf16 GEMM problem as the flagship)
// C = A @ B, A (M,K) and B (K,N) bf16 row-major, C (M,N) bf16, fp32 accumulate (KernelBench matmul in bf16).
//
// Built from CUTLASS 3's CuTe collectives through ../gemm_sm90_common.cuh (CollectiveBuilder mainloop and
// epilogue, kernel::GemmUniversal, device::GemmUniversalAdapter); this file is only the schedule choice:
//  * CUTLASS's MainloopSm90TmaGmmaWarpSpecialized (schedule cutlass::gemm::KernelTmaWarpSpecialized):
//    one CTA per 128x128 tile, 256 threads = a producer warpgroup (one elected thread issues the TMAs)
//    + one consumer warpgroup that only waits on full barriers, issues wgmma and releases stages
//    (128 fp32 accumulators per thread), over the same 7-stage full/empty mbarrier ring as rung 2.
//  * The loads leave the consumers' instruction stream. Still one tile per CTA: each tile's prologue and
//    epilogue are exposed, and this schedule does not rebalance registers (setmaxnreg): rung 4 does.
//  * Epilogue: NoSmemWarpSpecialized, registers -> global directly.
// Requirements: see gemm_sm90_common.cuh (K % 8 == 0, N % 8 == 0, 16-byte aligned bases, sm_90a).
// Measured (bench/gemm_rungs.py, H200, 2026-12-01, interleaved with torch.matmul in one process): 528 TFLOP/s at bf16 4096^3, 600 TFLOP/s at 2048x4096x8192 (x cuBLAS withdrawn: that run's cuBLAS read 667 TFLOP/s, 15 % under its interleaved 783).
#include "../gemm_sm90_common.cuh"

namespace gemm_sm90_warpspecialized_impl {
using namespace cute;
using Gemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _128, _64>, Shape<_1, _1, _1>,
                                  cutlass::gemm::KernelTmaWarpSpecialized,
                                  cutlass::epilogue::NoSmemWarpSpecialized>::Gemm;
}  // namespace gemm_sm90_warpspecialized_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  return cutegen_sm90_gemm::launch<gemm_sm90_warpspecialized_impl::Gemm>(inputs, num_inputs, outputs, num_outputs, stream);
}
