// 27_SELU_.cu -- y = scale * (x > 0 ? x : alpha * (exp(x) - 1)), fp32 (KernelBench level 1 #27:
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// torch.selu, with its fixed alpha = 1.6732632..., scale = 1.0507009...).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Numerics: expm1f (accurate near 0, where exp(x) - 1 would cancel); constants as in PyTorch.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.112 ms, 0.97x [0.96-0.99] eager, ~ 1 (0.93-1.07) torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct Selu {
  __device__ __forceinline__ float operator()(float x) const {
    constexpr float kAlpha = 1.6732632423543772848170429916717f;
    constexpr float kScale = 1.0507009873554804934193349852946f;
    return x > 0.0f ? x * kScale : expm1f(x) * (kAlpha * kScale);
  }
};

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return kb_elementwise::forward(Selu{}, inputs, num_inputs, outputs, num_outputs, stream);
}
