// 6_Matmul_with_large_K_dimension_.cu -- C = A @ B, A (256, 524288), B (524288, 256) fp32 row-
// In one line: 3xTF32 CuTe mma.sync GEMM (128x128x32, 4-stage cp.async), split-K over 33 CTAs per tile with fp32 atomics.
//   major.
//
// Design: common/gemm_3xtf32.cuh -- error-compensated 3xTF32 on the tensor cores (fp32 accuracy
// for atol = rtol = 1e-4 on any inputs, which plain TF32 is not), CuTe sm80 mma.sync mainloop,
// CTA tile 128x128x32, 4-stage cp.async, A K-major, B N-major.
// Only 4 output tiles, so split-K: 33 splits (4 x 33 = 132 CTAs, one per SM) of ~497 k-tiles;
// each adds its partial tile into C (zeroed first) with fp32 atomics. The load is 1.07 GB of
// operands = 0.25 ms at 4.3 TB/s; 68.7 GFLOP at 3xTF32 rates is ~0.7-0.9 ms: compute-bound.
// Requirements (else cudaErrorInvalidValue): fp32, 2-D, compact row-major, inner dimensions
// agree, each matrix < 2^31 elements. Any size: edges are predicated; unaligned rows take 4-byte
// copies.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 1.070 ms, 1.22x [1.21-1.24] eager, 1.25x [1.18-1.31] torch.compile, 48% (float32 math) of its roofline
#include "common/gemm_dlpack.cuh"

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return gemm_dlpack::matmul_2d</*A^T*/ false, /*B^T*/ false>(inputs, num_inputs, outputs,
                                                              num_outputs, stream);
}
