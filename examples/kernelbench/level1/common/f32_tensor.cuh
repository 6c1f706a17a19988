// f32_tensor.cuh -- launcher-side checks on the CuTeGen ABI's tensors that the KernelBench level-1
// activation kernels share: "is this a dense row-major fp32 tensor?" (the kernels index it as a
// flat array, so a strided view must be refused, not silently misread).
#pragma once

#include <cutegen/abi.h>

namespace kb_tensor {

inline bool is_f32(const DLTensor& t) {
  return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

// Row-major and compact: stride[i] == product of shape[i+1..]. Size-1 dimensions may carry any
// stride (PyTorch gives them arbitrary ones), since they are never stepped over. NULL strides
// mean compact in DLPack.
inline bool is_dense(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline bool is_dense_f32(const DLTensor& t) { return is_f32(t) && is_dense(t); }

}  // namespace kb_tensor
