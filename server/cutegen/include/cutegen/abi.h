// CuTeGen kernel ABI: the plain C entry point the harness loads with ctypes.
//
// A kernel file includes this header and defines exactly one launcher:
//
//   CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs,
//                                      DLTensor* outputs, int num_outputs,
//                                      cudaStream_t stream);
//
// - inputs[i] are the tensors returned by the problem's get_inputs(), in order (device memory,
//   strides in elements). Treat them as read-only: the harness checks that they are unchanged.
//   A Python number in get_inputs() (e.g. `s = 3.14`) arrives as a 0-d tensor in HOST memory
//   (device kDLCPU; float64, int64 or bool): read it in the launcher and pass it by value.
// - outputs[i] are allocated by the harness with the shape and dtype of the reference's outputs,
//   and filled with NaN/garbage before each call: every element must be written.
// - All work must be enqueued on `stream`; the launcher must not synchronize it.
// - Return 0 on success, or a cudaError_t (e.g. cudaGetLastError() after the launch).
//
// The tensor struct is laid out exactly like DLPack's DLTensor (v1), so a kernel that includes the
// real <dlpack/dlpack.h> first gets that one instead and nothing else changes. No torch headers are
// needed: that is the point (the per-edit build stays a plain nvcc call).
#pragma once
#include <stdint.h>
#include <cuda_runtime.h>

#ifndef DLPACK_DLPACK_H_
extern "C" {
typedef enum { kDLCPU = 1, kDLCUDA = 2 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; never NULL when passed by the harness
  uint64_t byte_offset;
} DLTensor;
}
#endif

#define CUTEGEN_EXPORT extern "C" __attribute__((visibility("default")))

// Total number of elements of a tensor (product of its shape).
static inline int64_t cutegen_numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// Typed data pointer, honouring byte_offset.
template <class T>
static inline T* cutegen_data(const DLTensor& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}
