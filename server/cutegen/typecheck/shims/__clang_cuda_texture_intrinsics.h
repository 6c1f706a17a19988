// clang's texture intrinsics use unannotated constexpr helpers in device code. The type tier parses with
// -fno-cuda-host-device-constexpr (nvcc's rule: a constexpr function is host-only unless marked), which would
// make those helpers host-only; this region keeps them usable on both sides, as clang means them to be.
// Found before clang's own header because the runtime wrapper includes it with angle brackets.
#pragma clang force_cuda_host_device begin
#include_next <__clang_cuda_texture_intrinsics.h>
#pragma clang force_cuda_host_device end
