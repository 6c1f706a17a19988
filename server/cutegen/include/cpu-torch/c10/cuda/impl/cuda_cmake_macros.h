#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS  // what PyTorch's CUDA builds generate; a CPU-only torch ships no such file
