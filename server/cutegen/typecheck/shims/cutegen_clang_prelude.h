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

// nvcc's atomic builtins (CUDA 12.8+): CUTLASS 4's subbyte_reference.h calls __nv_atomic_load_n when
// __CUDACC_VER_MAJOR__/MINOR__ (the type tier defines nvcc's) say 12.8 or later, a false error on every file that
// reaches it (CUTLASS's Hopper examples). crt/device_functions.h declares the order and scope constants for nvcc
// (__CUDACC__) only; the functions are builtins of nvcc's front end that clang lacks. nvcc's signatures: the order
// and scope are ints, the scope defaulting to the system's.
enum { __NV_ATOMIC_RELAXED, __NV_ATOMIC_CONSUME, __NV_ATOMIC_ACQUIRE, __NV_ATOMIC_RELEASE, __NV_ATOMIC_ACQ_REL,
       __NV_ATOMIC_SEQ_CST };
enum { __NV_THREAD_SCOPE_THREAD, __NV_THREAD_SCOPE_BLOCK, __NV_THREAD_SCOPE_CLUSTER, __NV_THREAD_SCOPE_DEVICE,
       __NV_THREAD_SCOPE_SYSTEM };
template <class T> __device__ T __nv_atomic_load_n(const T* ptr, int order, int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ void __nv_atomic_store_n(T* ptr, typename __cutegen_same<T>::type value, int order,
                                    int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ T __nv_atomic_exchange_n(T* ptr, typename __cutegen_same<T>::type value, int order,
                                    int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ bool __nv_atomic_compare_exchange_n(T* ptr, T* expected, typename __cutegen_same<T>::type desired,
                                               bool weak, int success_order, int failure_order,
                                               int scope = __NV_THREAD_SCOPE_SYSTEM);
#define __CUTEGEN_NV_FETCH(op)                                                                                   \
  template <class T>                                                                                             \
  __device__ T __nv_atomic_fetch_##op(T* ptr, typename __cutegen_same<T>::type value, int order,                \
                                      int scope = __NV_THREAD_SCOPE_SYSTEM);
__CUTEGEN_NV_FETCH(add) __CUTEGEN_NV_FETCH(sub) __CUTEGEN_NV_FETCH(and) __CUTEGEN_NV_FETCH(or)
__CUTEGEN_NV_FETCH(xor) __CUTEGEN_NV_FETCH(min) __CUTEGEN_NV_FETCH(max)
#undef __CUTEGEN_NV_FETCH
