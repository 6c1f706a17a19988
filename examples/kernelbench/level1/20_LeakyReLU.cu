// 20_LeakyReLU.cu -- y = x > 0 ? x : slope * x, fp32 (KernelBench level 1 #20:
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// F.leaky_relu with negative_slope = 0.01).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Parameter: negative_slope is the Model's first constructor argument. The launcher is the ABI's v2
// entry point, so it receives get_init_inputs() (init[0], a float64 host scalar) and falls back to the
// Model's default 0.01 when the problem passes none (KernelBench's get_init_inputs() is empty). The slope
// is rounded to float as PyTorch does (its opmath type) and handed to the functor as a kernel argument.
// Numerics: one multiply, bit-identical to PyTorch's `x > 0 ? x : x * negval`.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.114 ms, 0.97x [0.96-0.98] eager, ~ 1 (0.92-1.10) torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct LeakyReLU {
  float slope;
  __device__ __forceinline__ float operator()(float x) const { return x > 0.0f ? x : x * slope; }
};

CUTEGEN_EXPORT int cutegen_forward_v2(const DLTensor* init, int num_init, const DLTensor* inputs,
                                      int num_inputs, DLTensor* outputs, int num_outputs,
                                      cudaStream_t stream) {
  bool ok = num_init <= 1;
  const float slope = float(cutegen_init_scalar(init, num_init, 0, /*Model's default=*/0.01, &ok));
  if (!ok) return cudaErrorInvalidValue;
  return kb_elementwise::forward(LeakyReLU{slope}, inputs, num_inputs, outputs, num_outputs, stream);
}
