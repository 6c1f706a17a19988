// 29_Softplus.cu -- y = log(1 + exp(x)), fp32 (KernelBench level 1 #29: F.softplus with its
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// defaults beta = 1, threshold = 20).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Numerics: PyTorch's semantics `x * beta > threshold ? x : log1p(exp(x * beta)) / beta` with
// beta = 1 (so the scaling drops out), accurate expf and log1pf; above the threshold the result is
// x itself (log1p(exp(x)) - x = log1p(exp(-x)) < 2.1e-9 there).
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.113 ms, ~ 1 (0.98-1.12) eager, ~ 1 (0.94-1.06) torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct Softplus {
  __device__ __forceinline__ float operator()(float x) const {
    constexpr float kThreshold = 20.0f;
    return x > kThreshold ? x : log1pf(expf(x));
  }
};

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return kb_elementwise::forward(Softplus{}, inputs, num_inputs, outputs, num_outputs, stream);
}
