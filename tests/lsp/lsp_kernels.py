"""Small CuTe kernels for the language-server tests (written into a temporary workspace)."""

# Line 12 (1-based) sizes a register tensor with a runtime int: CuTe's make_tensor static_asserts
# "Dynamic owning tensors not supported".
BROKEN = """\
// {tag}: per-thread register accumulator sized with a runtime int instead of a static Int<>
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int rows, int cols, int cols_per_thread)
{{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{{}}));
  int row = blockIdx.x;
  Tensor gRow = mX(row, _);  // (cols)

  // the accumulator
  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));
  clear(rAcc);
  for (int j = 0; j < size(rAcc); ++j) {{
    int col = threadIdx.x * size(rAcc) + j;
    if (col < cols) rAcc(j) = gRow(col);
  }}
  float s = 0.f;
  for (int j = 0; j < size(rAcc); ++j) s += rAcc(j);
  if (threadIdx.x == 0) out[row] = s;
}}
"""
BROKEN_LINE = 11  # 0-based, as LSP counts
KERNEL_LINE = 4
ROOT = "Dynamic owning tensors not supported"


def broken(tag: str) -> str:
    """A distinct text per tag: the build cache keys on the text, and tests must not share entries."""
    return BROKEN.format(tag=tag)


def fixed(tag: str) -> str:
    return broken(tag).replace("make_tensor<float>(make_shape(cols_per_thread))", "make_tensor<float>(Int<4>{})")
