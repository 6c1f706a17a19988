// gemm_dlpack.cuh -- from the CuTeGen ABI's DLTensors to a gemm_3xtf32::Problem: the argument
// checks shared by the fp32 matmul kernels of KernelBench level 1. Everything refused returns
// cudaErrorInvalidValue.
#pragma once

#include <cutegen/abi.h>

#include "gemm_3xtf32.cuh"

namespace gemm_dlpack {

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

// fp32, `ndim` dimensions, every extent in [1, 2^31), compact row-major (NULL strides mean
// compact in DLPack).
inline bool is_compact_f32(const DLTensor& t, int ndim) {
  if (!is_f32(t) || t.ndim != ndim) return false;
  for (int i = 0; i < ndim; ++i) {
    if (t.shape[i] <= 0 || t.shape[i] > 0x7fffffff) return false;
  }
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// C = op(A) @ op(B) (then triu/tril when `triangle` says so) for 2-D compact row-major tensors.
// op(X) = X^T when the template flag says the problem transposes it; a transposed row-major
// operand is simply the other majorness, so no data moves.
template <bool kATransposed, bool kBTransposed>
inline int matmul_2d(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                     cudaStream_t stream,
                     gemm_3xtf32::Triangle triangle = gemm_3xtf32::Triangle::kNone) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor &a = inputs[0], &b = inputs[1], &c = outputs[0];
  if (!is_compact_f32(a, 2) || !is_compact_f32(b, 2) || !is_compact_f32(c, 2)) {
    return cudaErrorInvalidValue;
  }
  // Stored shapes: A (M,K) or (K,M) if transposed; B (K,N) or (N,K) if transposed.
  const int64_t M = kATransposed ? a.shape[1] : a.shape[0];
  const int64_t K = kATransposed ? a.shape[0] : a.shape[1];
  const int64_t Kb = kBTransposed ? b.shape[1] : b.shape[0];
  const int64_t N = kBTransposed ? b.shape[0] : b.shape[1];
  if (Kb != K || c.shape[0] != M || c.shape[1] != N) return cudaErrorInvalidValue;

  gemm_3xtf32::Problem p;
  p.A = cutegen_data<const float>(a);
  p.B = cutegen_data<const float>(b);
  p.C = cutegen_data<float>(c);
  p.M = int(M);
  p.N = int(N);
  p.K = int(K);
  p.lda = int(a.shape[1]);  // the stored row length, whichever dimension that is
  p.ldb = int(b.shape[1]);
  p.ldc = int(N);
  p.triangle = triangle;
  // Row-major A (M,K) is K-major; its transpose is M-major. Row-major B (K,N) is N-major; its
  // transpose (stored (N,K)) is K-major.
  return gemm_3xtf32::run</*A K-major*/ !kATransposed, /*B K-major*/ kBTransposed>(p, stream);
}

}  // namespace gemm_dlpack
