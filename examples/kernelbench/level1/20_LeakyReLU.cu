// 20_LeakyReLU.cu -- y = x > 0 ? x : slope * x, fp32 (KernelBench level 1 #20:
// In one line: CuTe TiledCopy stream, 8192-float tile per CTA, 512 threads x 4 x 128-bit loads issued before the math.
// F.leaky_relu with negative_slope = 0.01).
//
// Design: common/elementwise.cuh -- one 8192-float tile per CTA, 512 threads x 4 x 128-bit CuTe
// TiledCopy accesses, all loads issued before the math, a predicated tail, a scalar path for
// misaligned pointers. Memory-bound (8 bytes per element); this file holds only the math.
// Parameter: the slope is the problem's: Model(negative_slope=0.01), get_init_inputs() is empty,
// so the default 0.01 applies. The launcher passes it to the functor (a kernel argument): another
// slope is a one-line change here; the kernel cannot read the Python module's attributes.
// Numerics: one multiply, bit-identical to PyTorch's `x > 0 ? x : x * negval`.
// Requirements: one fp32 input and one fp32 output, both dense (row-major compact), with equal
// element counts; anything else returns cudaErrorInvalidValue. Any shape, any n >= 0.
//
// Measured (H200, 2026-12-01, one `cutegen suite` run, 5 trials): pass, median 3.115 ms, 0.97x eager, 0.97x torch.compile, 96% (memory) of its roofline
#include <cutegen/abi.h>

#include "common/elementwise.cuh"

struct LeakyReLU {
  float slope;
  __device__ __forceinline__ float operator()(float x) const { return x > 0.0f ? x : x * slope; }
};

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  return kb_elementwise::forward(LeakyReLU{0.01f}, inputs, num_inputs, outputs, num_outputs,
                                 stream);
}
