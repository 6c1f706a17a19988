// 9_Tall_skinny_matrix_multiplication_.cu -- C = A @ B, A (32768, 32), B (32, 32768) fp32 row-
// In one line: 3xTF32 CuTe mma.sync GEMM (128x128x32, 4-stage cp.async) (K = 32: output-write bound).
//   major.
//
// Design: common/gemm_3xtf32.cuh -- error-compensated 3xTF32 on the tensor cores (fp32 accuracy
// for atol = rtol = 1e-4 on any inputs, which plain TF32 is not), CuTe sm80 mma.sync mainloop,
// CTA tile 128x128x32, 4-stage cp.async, A K-major, B N-major.
// K = 32 is one k-tile: memory-bound on the C store. Roofline: C is 4.29 GB -> 1.00 ms at
// 4.30 TB/s (inputs 8 MB); 68.7 GFLOP -> 1.03 ms at fp32 SIMT peak, ~0.7-0.9 ms at 3xTF32 rates.
// Requirements (else cudaErrorInvalidValue): fp32, 2-D, compact row-major, inner dimensions
// agree, each matrix < 2^31 elements. Any size: edges are predicated; unaligned rows take 4-byte
// copies.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 2.679 ms, 0.95x [0.94-0.96] eager, ~ 1 (0.94-1.04) torch.compile, 37% (memory) of its roofline
#include "common/gemm_dlpack.cuh"

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return gemm_dlpack::matmul_2d</*A^T*/ false, /*B^T*/ false>(inputs, num_inputs, outputs,
                                                              num_outputs, stream);
}
