// gemm_sm90_pipelined.cu -- rung 2 of the Hopper GEMM ladder: TMA + WGMMA with a multistage mbarrier pipeline (KernelTma).
// cutegen: problem=../../gemm_bf16/gemm_bf16.py   (the same bf16 GEMM problem as the flagship)
// C = A @ B, A (M,K) and B (K,N) bf16 row-major, C (M,N) bf16, fp32 accumulate (KernelBench matmul in bf16).
//
// Built from CUTLASS 3's CuTe collectives through ../gemm_sm90_common.cuh (CollectiveBuilder mainloop and
// epilogue, kernel::GemmUniversal, device::GemmUniversalAdapter); this file is only the schedule choice:
//  * CUTLASS's MainloopSm90TmaGmma (schedule cutlass::gemm::KernelTma): one CTA per 128x128 tile, one
//    warpgroup (128 threads, 128 fp32 accumulators each) that both loads and computes: an elected lane
//    of warp 0 keeps a 7-stage TMA ring (StageCountAutoCarveout: as many 128x64 + 64x128 bf16 stages as
//    fit) ahead of the wgmmas; each stage has a full barrier (TMA transaction bytes) and an empty
//    barrier (the consumers released it). One wgmma batch stays in flight across k-tiles
//    (warpgroup_wait<1>), unlike rung 1 (gemm_sm90_tma_wgmma), which waits for every k-tile's wgmma.
//  * Not warp-specialized: the TMA issue sits in the consumers' instruction stream; not persistent: each
//    CTA's prologue (barrier init, pipeline fill) and epilogue are exposed, not overlapped with a mainloop.
//  * Epilogue: NoSmemWarpSpecialized, registers -> global directly.
// Requirements: see gemm_sm90_common.cuh (K % 8 == 0, N % 8 == 0, 16-byte aligned bases, sm_90a).
// Measured (bench/gemm_rungs.py, H200, 2026-12-01, interleaved with torch.matmul in one process): 495 TFLOP/s at bf16 4096^3, 562 TFLOP/s at 2048x4096x8192 (x cuBLAS withdrawn: that run's cuBLAS read 667 TFLOP/s, 15 % under its interleaved 783).
#include "../gemm_sm90_common.cuh"

namespace gemm_sm90_pipelined_impl {
using namespace cute;
using Gemm = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _128, _64>, Shape<_1, _1, _1>,
                                  cutlass::gemm::KernelTma,
                                  cutlass::epilogue::NoSmemWarpSpecialized>::Gemm;
}  // namespace gemm_sm90_pipelined_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  return cutegen_sm90_gemm::launch<gemm_sm90_pipelined_impl::Gemm>(inputs, num_inputs, outputs, num_outputs, stream);
}
