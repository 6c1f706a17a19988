// Pre-included into the type tier's clang parse (cutegen/typecheck/checker.py), never into an nvcc build.
// Declarations only: the parse stops after semantic analysis, so nothing here is ever code-generated.
#pragma once
#include <cuda_runtime_api.h>

// clang's `<<<...>>>` in device-only mode calls the legacy launch configuration, which CUDA 13 removed from
// cuda_runtime_api.h.
extern "C" cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0, cudaStream_t stream = 0);

// Cache-hint stores CUDA declares for nvcc but clang 22's __clang_cuda_intrinsics.h lacks (it has __stwt only).
// The value's type is not deduced, so it converts as it does for nvcc's overloads.
template <class T> struct __cutegen_same { typedef T type; };
template <class T> __device__ void __stcs(T* ptr, typename __cutegen_same<T>::type value);
template <class T> __device__ void __stcg(T* ptr, typename __cutegen_same<T>::type value);
template <class T> __device__ void __stwb(T* ptr, typename __cutegen_same<T>::type value);
