// 31_ELU.cu -- y = x > 0 ? x : alpha * (exp(x) - 1), fp32 (KernelBench level 1 #31:
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// F.elu with alpha = 1.0).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Parameter: alpha is the Model's constructor argument, get_init_inputs() = [1.0] here. The launcher is
// the ABI's v2 entry point: it reads alpha from init[0] (a float64 host scalar; the Model's default 1.0
// when none is passed), rounds it to float as PyTorch does, and hands it to the functor.
// Numerics: expm1f (accurate near 0, where exp(x) - 1 would cancel), as PyTorch's CUDA kernel.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-02, 5 `cutegen suite` runs in separate processes, 5 trials each; 95 % intervals for another run): pass, median 3.115 ms, 0.97x [0.96-0.99] eager, ~ 1 (0.91-1.12) torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct Elu {
  float alpha;
  __device__ __forceinline__ float operator()(float x) const {
    return x > 0.0f ? x : expm1f(x) * alpha;
  }
};

CUTEGEN_EXPORT int cutegen_forward_v2(const DLTensor* init, int num_init, const DLTensor* inputs,
                                      int num_inputs, DLTensor* outputs, int num_outputs,
                                      cudaStream_t stream) {
  bool ok = num_init <= 1;
  const float alpha = float(cutegen_init_scalar(init, num_init, 0, /*Model's default=*/1.0, &ok));
  if (!ok) return cudaErrorInvalidValue;
  return kb_elementwise::forward(Elu{alpha}, inputs, num_inputs, outputs, num_outputs, stream);
}
