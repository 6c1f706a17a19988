// 24_LogSoftmax.cu -- y = log_softmax(x, dim=1) for a (rows, dim) fp32 tensor
// In one line: 8-CTA cluster per row, the row kept in shared memory (x read once), (max, sum) merged over DSMEM.
// (KernelBench level 1 #24: torch.log_softmax(x, dim=1), 4096 rows x 393216 floats: 1.5 MB a row).
//
// Design: common/softmax_rows.cuh -- one 8-CTA thread-block cluster per row, the row staged in
// the cluster's shared memory (8 x 192 KB) so x is read from DRAM once; persistent clusters; each
// row's online (max, sum of exp) pass is fused into the previous row's output loop, so DRAM keeps
// streaming; the 8 partial (max, sum) pairs are merged through distributed shared memory.
// Requirements: one 2-D fp32 input and a same-shape fp32 output, both dense (row-major compact),
// rows and dim below 2^31; anything else returns cudaErrorInvalidValue. dim % 4 != 0 or
// misaligned pointers take a correct but slower one-CTA-per-row fallback.
// Parameter: Model(dim=1) reduces the last of two dimensions; the launcher is the ABI's v2 entry point,
// so a problem built with another `dim` (get_init_inputs()) is refused (cudaErrorInvalidValue), never
// silently computed along the wrong one. 1 and -1 are the dimension this kernel reduces.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.320 ms, 1.88x [1.82-1.91] eager, 1.48x [1.38-1.55] torch.compile, 90% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/softmax_rows.cuh"

CUTEGEN_EXPORT int cutegen_forward_v2(const DLTensor* init, int num_init, const DLTensor* inputs,
                                      int num_inputs, DLTensor* outputs, int num_outputs,
                                      cudaStream_t stream) {
  bool ok = num_init <= 1;
  const double dim = cutegen_init_scalar(init, num_init, 0, /*Model's default=*/1.0, &ok);
  if (!ok || (dim != 1.0 && dim != -1.0)) return cudaErrorInvalidValue;
  return kb_softmax::forward</*kLog=*/true>(inputs, num_inputs, outputs, num_outputs, stream);
}
