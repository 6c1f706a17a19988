// gemm_sm90_producer_loop.cuh -- CUTLASS's TMA producer loop (the load of its sm90 warp-specialized CollectiveMma),
// written once for the mainloops of our own that change it: a step between a stage's acquire and its loads
// (gemm_sm90_lockstep.cuh) and an L2 eviction hint per operand (gemm_sm90_alternating_k.cuh's AlternatingKStreamed).
// With no step and both hints EVICT_NORMAL it issues what CUTLASS's issues.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

namespace cutegen_sm90_gemm {

// The CTAs of this one's cluster that a multicast load of an operand fills: those along the cluster mode the operand
// is shared over (A: N, mode 1; B: M, mode 0), at this CTA's place in the other mode (CUTLASS's producer's masks).
template <class Copy, int SharedMode, class ClusterShape>
CUTLASS_DEVICE uint16_t operand_multicast_mask(uint32_t place) {
  uint16_t mask = 0;
  if constexpr (cute::is_same_v<Copy, cute::SM90_TMA_LOAD_MULTICAST>) {
    auto block = cute::Layout<ClusterShape>{};  // (m,n) -> rank in the cluster
    for (int i = 0; i < cute::size<SharedMode>(block); ++i) {
      mask |= uint16_t(1) << (SharedMode == 1 ? block(place, i, cute::Int<0>{}) : block(i, place, cute::Int<0>{}));
    }
  }
  return mask;
}

struct OperandHints {
  cute::TMA::CacheHintSm90 a = cute::TMA::CacheHintSm90::EVICT_NORMAL;
  cute::TMA::CacheHintSm90 b = cute::TMA::CacheHintSm90::EVICT_NORMAL;
};

// Mainloop: CUTLASS's CollectiveMma (its types, Params and shared storage). KTiles: *it the k-tile, ++it the next.
// before_loads(): run once a k-step, after its stage is acquired and before its loads are issued. The elected lane
// alone runs the loop, as CUTLASS's.
template <class Mainloop, class TensorA, class TensorB, class KTiles, class BlockCoord, class BeforeLoads>
CUTLASS_DEVICE void load_stages(typename Mainloop::Params const& params, typename Mainloop::MainloopPipeline pipeline,
                                typename Mainloop::PipelineState write, cute::tuple<TensorA, TensorB> const& inputs,
                                BlockCoord const& blk_coord, KTiles k_tile, int k_tile_count,
                                uint32_t block_rank_in_cluster, typename Mainloop::TensorStorage& shared,
                                OperandHints hints, BeforeLoads&& before_loads) {
  using namespace cute;
  using ClusterShape = typename Mainloop::DispatchPolicy::ClusterShape;
  if (!elect_one_sync()) {
    return;
  }
  Tensor sA = make_tensor(make_smem_ptr(shared.smem_A.data()), typename Mainloop::SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(shared.smem_B.data()), typename Mainloop::SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
  constexpr uint32_t cluster_x = get<0>(ClusterShape{});
  const uint32_t x = block_rank_in_cluster % cluster_x, y = block_rank_in_cluster / cluster_x;
  auto tma_a = params.tma_load_a.get_slice(y);
  auto tma_b = params.tma_load_b.get_slice(x);
  auto [m, n, k, l] = blk_coord;
  Tensor tAgA = tma_a.partition_S(get<0>(inputs)(_, _, m, _, l));
  Tensor tAsA = tma_a.partition_D(sA);
  Tensor tBgB = tma_b.partition_S(get<1>(inputs)(_, _, n, _, l));
  Tensor tBsB = tma_b.partition_D(sB);
  const uint16_t mask_a = operand_multicast_mask<typename Mainloop::GmemTiledCopyA, 1, ClusterShape>(x);
  const uint16_t mask_b = operand_multicast_mask<typename Mainloop::GmemTiledCopyB, 0, ClusterShape>(y);
  CUTLASS_PRAGMA_NO_UNROLL
  for (; k_tile_count > 0; --k_tile_count) {
    pipeline.producer_acquire(write);
    before_loads();
    auto* barrier = pipeline.producer_get_barrier(write);
    copy(params.tma_load_a.with(*barrier, mask_a, hints.a), tAgA(_, _, _, *k_tile), tAsA(_, _, _, write.index()));
    copy(params.tma_load_b.with(*barrier, mask_b, hints.b), tBgB(_, _, _, *k_tile), tBsB(_, _, _, write.index()));
    ++k_tile;
    ++write;
  }
}

}  // namespace cutegen_sm90_gemm
