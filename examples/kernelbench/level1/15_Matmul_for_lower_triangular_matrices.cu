// 15_Matmul_for_lower_triangular_matrices.cu -- C = tril(A @ B), A and B (N,N) fp32 lower
// In one line: 3xTF32 CuTe mma.sync GEMM (128x128x32, 4-stage cp.async), triangular mode: zero tiles store only, each tile's K range clipped.
//   triangular, row-major.
//
// Design: common/gemm_3xtf32.cuh -- error-compensated 3xTF32 on the tensor cores (fp32 accuracy
// for atol = rtol = 1e-4 on any inputs, which plain TF32 is not), CuTe sm80 mma.sync mainloop,
// CTA tile 128x128x32, 4-stage cp.async, A K-major, B N-major, lower-triangular
// mode: the 496 tiles strictly above the diagonal store zeros without a mainloop; tile (i,j)
// runs only k in [128 j, 128 (i+1)); diagonal tiles zero their elements above the diagonal.
// Requirements (else cudaErrorInvalidValue): fp32, 2-D, compact row-major, all three (N,N).
// A and B must be lower triangular, as the problem defines them: their upper triangles are not
// read (a nonzero there would be ignored, unlike torch.matmul).
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 0.446 ms, 6.12x [6.04-6.20] eager, 6.24x [5.73-6.80] torch.compile, 38% (float32 math) of its roofline
#include "common/gemm_dlpack.cuh"

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return gemm_dlpack::matmul_2d</*A^T*/ false, /*B^T*/ false>(inputs, num_inputs, outputs,
                                                              num_outputs, stream,
                                                              gemm_3xtf32::Triangle::kLower);
}
