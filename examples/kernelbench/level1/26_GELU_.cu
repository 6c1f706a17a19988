// 26_GELU_.cu -- y = x/2 * (1 + erf(x / sqrt(2))), fp32 (KernelBench level 1 #26:
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// F.gelu with its default approximate='none', i.e. the exact erf form, not the tanh one).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Numerics: CUDA's erff (max 2 ulp), PyTorch's own formula `x * 0.5 * (1 + erf(x * M_SQRT1_2))`.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.058 ms, ~ 1 (0.98-1.00) eager, ~ 1 (0.94-1.11) torch.compile, 98% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct GeluErf {
  __device__ __forceinline__ float operator()(float x) const {
    constexpr float kSqrtHalf = 0.70710678118654752440f;  // 1 / sqrt(2)
    return x * 0.5f * (1.0f + erff(x * kSqrtHalf));
  }
};

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return kb_elementwise::forward(GeluErf{}, inputs, num_inputs, outputs, num_outputs, stream);
}
