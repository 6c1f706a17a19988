// Empty on purpose: clang's CUDA wrapper (__clang_cuda_runtime_wrapper.h) includes this header, which CUDA 13
// no longer ships. Only the type tier's clang parse sees this folder (cutegen/typecheck/checker.py).
#pragma once
