// 30_Softsign.cu -- y = x / (1 + |x|), fp32 (KernelBench level 1 #30).
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Numerics: IEEE division, the problem's formula.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.094 ms, 3.38x [3.29-3.46] eager, ~ 1 (0.96-1.14) torch.compile, 97% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct Softsign {
  __device__ __forceinline__ float operator()(float x) const { return x / (1.0f + fabsf(x)); }
};

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return kb_elementwise::forward(Softsign{}, inputs, num_inputs, outputs, num_outputs, stream);
}
