// gemm_sm90_unhinted_tma.cuh -- TMA tensor loads without an L2 cache-policy operand, for the CUTLASS collectives
// of the file that defines CUTEGEN_TMA_LOAD_NO_CACHE_HINT before including gemm_sm90_common.cuh.
//
// Why: CuTe's SM90_TMA_LOAD(_MULTICAST) always issues `cp.async.bulk.tensor....L2::cache_hint` with a policy
// (EVICT_NORMAL unless the collective passes another; SASS `UTMALDG.3D desc[URx], ...`), where cuBLAS's nvjet
// kernels issue the plain form (`UTMALDG.3D [URx], [URy]`). Same loads and bytes otherwise (bench/gemm_sass.py), yet
// at 4096^3 cuBLAS's SMs send L2 0.84x the read requests (bench/gemm_traffic.py). L2's request coalescer merges
// identical reads from several SMs ("hardware" coalescing, beside multicast's "programmatic"); whether a request
// carrying a cache policy can be merged is what this build tests.
//
// How: CuTe calls a TMA load's op through detail::CallCOPY<Op>; the two executable load ops' CallCOPY is specialized
// here, for every kernel of the translation unit (a specialization must precede any use, and applies to all).
// Tensor ranks other than 3 (the GEMMs here are (rows, cols, batch)) keep CuTe's hinted op.
#pragma once

#if defined(CUTEGEN_TMA_LOAD_NO_CACHE_HINT)
#include <cstdint>

#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/arch/util.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

namespace cutegen_sm90_gemm {

// One 3-D tensor tile into this CTA's shared memory, completing on mbar.
CUTE_HOST_DEVICE void tma_load_3d_unhinted(void const* desc, uint64_t* mbar, void* smem, int32_t c0, int32_t c1,
                                           int32_t c2) {
#if defined(CUTE_ARCH_TMA_SM90_ENABLED)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      :
      : "r"(cute::cast_smem_ptr_to_uint(smem)), "l"(reinterpret_cast<uint64_t>(desc)),
        "r"(cute::cast_smem_ptr_to_uint(mbar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
#else
  CUTE_INVALID_CONTROL_PATH("TMA loads need sm_90a");
#endif
}

// The same tile into the shared memory of each CTA of the cluster in `mask`, at the same offset.
CUTE_HOST_DEVICE void tma_load_3d_multicast_unhinted(void const* desc, uint64_t* mbar, uint16_t mask, void* smem,
                                                     int32_t c0, int32_t c1, int32_t c2) {
#if defined(CUTE_ARCH_TMA_SM90_ENABLED)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5, %6}], [%2], %3;"
      :
      : "r"(cute::cast_smem_ptr_to_uint(smem)), "l"(reinterpret_cast<uint64_t>(desc)),
        "r"(cute::cast_smem_ptr_to_uint(mbar)), "h"(mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
#else
  CUTE_INVALID_CONTROL_PATH("TMA loads need sm_90a");
#endif
}

}  // namespace cutegen_sm90_gemm

namespace cute::detail {

template <>
struct CallCOPY<SM90_TMA_LOAD_OP> {
  template <class Desc, class... Coords>
  CUTE_HOST_DEVICE void operator()(Desc const* desc, uint64_t* mbar, uint64_t cache_hint, void* smem,
                                   Coords const&... crd) const {
    if constexpr (sizeof...(Coords) == 3) {
      cutegen_sm90_gemm::tma_load_3d_unhinted(desc, mbar, smem, int32_t(crd)...);
    } else {
      SM90_TMA_LOAD::copy(desc, mbar, cache_hint, smem, crd...);
    }
  }
};

template <>
struct CallCOPY<SM90_TMA_LOAD_MULTICAST_OP> {
  template <class Desc, class... Coords>
  CUTE_HOST_DEVICE void operator()(Desc const* desc, uint64_t* mbar, uint16_t mask, uint64_t cache_hint, void* smem,
                                   Coords const&... crd) const {
    if constexpr (sizeof...(Coords) == 3) {
      cutegen_sm90_gemm::tma_load_3d_multicast_unhinted(desc, mbar, mask, smem, int32_t(crd)...);
    } else {
      SM90_TMA_LOAD_MULTICAST::copy(desc, mbar, mask, cache_hint, smem, crd...);
    }
  }
};

}  // namespace cute::detail
#endif
