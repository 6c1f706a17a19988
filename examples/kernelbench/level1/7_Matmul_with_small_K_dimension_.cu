// 7_Matmul_with_small_K_dimension_.cu -- C = A @ B, A (32768, 64), B (64, 32768) fp32 row-major.
// In one line: 3xTF32 CuTe mma.sync GEMM (128x128x32, 4-stage cp.async) (K = 64: two k-tiles per output tile).
//
// Design: common/gemm_3xtf32.cuh -- error-compensated 3xTF32 on the tensor cores (fp32 accuracy
// for atol = rtol = 1e-4 on any inputs, which plain TF32 is not), CuTe sm80 mma.sync mainloop,
// CTA tile 128x128x32, 4-stage cp.async, A K-major, B N-major.
// K = 64 is two k-tiles: 65536 tiles whose cost is the prologue, 6 MMAs x 3 per k8 and the
// 64 KB C tile store. Roofline: C is 4.29 GB -> 1.00 ms at 4.30 TB/s; 137 GFLOP -> 2.05 ms at
// fp32 SIMT peak (67 TFLOP/s), ~1.4-1.8 ms at 3xTF32 mma.sync rates: compute-bound, barely.
// Requirements (else cudaErrorInvalidValue): fp32, 2-D, compact row-major, inner dimensions
// agree, each matrix < 2^31 elements. Any size: edges are predicated; unaligned rows take 4-byte
// copies.
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.771 ms, 1.07x [1.06-1.09] eager, 1.12x [1.04-1.19] torch.compile, 27% (float32 math) of its roofline
#include "common/gemm_dlpack.cuh"

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return gemm_dlpack::matmul_2d</*A^T*/ false, /*B^T*/ false>(inputs, num_inputs, outputs,
                                                              num_outputs, stream);
}
