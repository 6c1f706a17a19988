// gemm_sm90_dynamic_tiles.cuh -- a persistent tile scheduler that hands out tiles first come first served, as
// cuBLAS's 4096^3 kernel does (bench/gemm_sass.py's listing: after two cluster tiles by launch index, a cluster
// takes each next one from a global counter). Included by gemm_sm90_common.cuh (after gemm_sm90_grouped_tiles.cuh);
// used as a TileScheduler tag: Sm90Gemm<TileShape, ClusterShape, Mainloop, Epilogue, cutegen_sm90_gemm::DynamicTiles<2>>.
//
// Why: the flagship's scheduler is static (cluster c takes cluster tiles c, c + G, c + 2G, ...), so the clusters
// that run adjacent tiles, which share operand panels, started them whenever their earlier tiles happened to end.
// First come first served, clusters that finish together take adjacent tiles and start them together, and SMs
// that ask L2 for a panel at the same time get their reads merged (examples/idioms/gemm_sm90_lockstep.cuh measured
// that with a barrier, which cost a third of the speed; cuBLAS gets cuBLAS's merges with this scheduler).
//
// How (CUTLASS's sm90 persistent path, where every warp role of both CTAs of a cluster asks the scheduler for its
// next tile on its own): answers are kept per cluster in the scheduler's workspace, in a ring of kRing slots, each
// tagged with the answer's number k, so every role of the cluster reads the same k-th tile. The first warp to need
// answer k claims its slot (atomicCAS), takes the next index from the counter (atomicAdd) and writes it; the
// others poll the slot. Tiles in the cluster's first StaticRounds are by launch index, as CUTLASS's. The ring
// needs no reset within a launch: no role runs kRing tiles ahead of another (the mainloop pipeline holds the
// producer to one tile ahead). The launcher zeroes the workspace before every launch (LastLaunch), as it does for
// the split kernels; cuBLAS's launch has a memset too.
// A wait that never ends traps (an error the caller sees) instead of hanging: it would mean a bug here.
// Status: built, never run on a GPU (seventeenth session, no device time left); a bench candidate only.
#pragma once

#include <cstdint>

namespace cutegen_sm90_gemm {

template <int StaticRounds>
struct DynamicTiles {
  static_assert(StaticRounds >= 1);
};

#if defined(__CUDACC__)
template <int StaticRounds>
class DynamicTileScheduler : public GroupedTileScheduler<1, 1, 1> {  // (1, 1, 1): row by row, CUTLASS's swizzle 1
  using Base = GroupedTileScheduler<1, 1, 1>;
  using StaticBase = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;

 public:
  using WorkTileInfo = typename Base::WorkTileInfo;
  using Arguments = typename StaticBase::Arguments;
  static constexpr int kRing = 4;
  // An answer: bits 20-31 its number k (mod 4096), bits 0-19 the cluster tile's index + 1 (0: not answered yet).
  static constexpr uint32_t kIndexBits = 20, kIndexMask = (1u << kIndexBits) - 1, kClaimed = kIndexMask;

  struct Params : StaticBase::Params {
    uint32_t* workspace = nullptr;  // [0] the counter, then kRing answers per cluster
  };

  template <class ProblemShapeMNKL, class TileShape, class ClusterShape>
  static Params to_underlying_arguments(ProblemShapeMNKL problem, TileShape tile, ClusterShape cluster,
                                        cutlass::KernelHardwareInfo const& hw, Arguments const& arguments,
                                        void* workspace = nullptr, uint32_t epilogue_subtile = 1,
                                        uint32_t k_alignment = 1) {
    Params params;
    static_cast<typename StaticBase::Params&>(params) = StaticBase::to_underlying_arguments(
        problem, tile, cluster, hw, arguments, workspace, epilogue_subtile, k_alignment);
    params.workspace = static_cast<uint32_t*>(workspace);
    return params;
  }

  // As many clusters as SMs bounds any grid's; a few KB, zeroed before every launch.
  template <class ProblemShape, class ElementAccumulator>
  static size_t get_workspace_size(Arguments const&, ProblemShape, cutlass::KernelHardwareInfo const& hw, uint32_t,
                                   uint32_t = 1, uint32_t = 1) {
    return sizeof(uint32_t) * (1 + size_t(hw.sm_count > 0 ? hw.sm_count : 1024) * kRing);
  }

  template <class ProblemShape, class ElementAccumulator>
  static cutlass::Status initialize_workspace(Arguments const& args, void* workspace, cudaStream_t stream,
                                              ProblemShape problem, cutlass::KernelHardwareInfo const& hw,
                                              uint32_t warpgroups, uint32_t = 1, uint32_t = 1,
                                              cutlass::CudaHostAdapter* = nullptr) {
    const size_t bytes = get_workspace_size<ProblemShape, ElementAccumulator>(args, problem, hw, warpgroups);
    return cudaMemsetAsync(workspace, 0, bytes, stream) == cudaSuccess ? cutlass::Status::kSuccess
                                                                       : cutlass::Status::kErrorInternal;
  }

  // Base's cluster_index_ stays this cluster's own (its advance is not called): the first cluster tile's index.
  CUTLASS_DEVICE explicit DynamicTileScheduler(Params const& params) : Base(params), workspace_(params.workspace) {}

  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) { return work_for(cluster_index_); }

  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    ++answer_;
    return cute::make_tuple(work_for(index_of(answer_)), true);
  }

  template <class Pipeline, class PipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo work_tile_info, Pipeline&, PipelineState) {
    return fetch_next_work(work_tile_info);
  }

  // Not knowable before the counter answers; CUTLASS's sm90 kernels ask only with programmatic dependent launch.
  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t = 1) const { return false; }

 private:
  // The k-th cluster tile of this cluster (k = 0 is its first): by launch index in the static rounds, else the
  // cluster's k-th answer. Warp-uniform: lane 0 reads, claims or waits, the warp takes its word.
  CUTLASS_DEVICE uint64_t index_of(uint32_t k) const {
    if (k < uint32_t(StaticRounds)) {
      return cluster_index_ + uint64_t(k) * clusters_in_grid_;
    }
    const uint32_t lanes = __activemask(), leader = __ffs(lanes) - 1;
    uint32_t index = 0;
    if ((threadIdx.x & 31) == leader) {
      index = answer(k);
    }
    return __shfl_sync(lanes, index, leader);
  }

  CUTLASS_DEVICE uint32_t answer(uint32_t k) const {
    uint32_t* slot = workspace_ + 1 + cluster_index_ * kRing + k % kRing;
    const uint32_t tag = (k & 0xfff) << kIndexBits;
    for (int poll = 0; poll < (1 << 22); ++poll) {  // ~0.5 s of 128 ns sleeps: far past any tile's time
      const uint32_t seen = *reinterpret_cast<volatile uint32_t*>(slot);
      if ((seen & ~kIndexMask) == tag && (seen & kIndexMask) != 0 && (seen & kIndexMask) != kClaimed) {
        return (seen & kIndexMask) - 1;
      }
      if ((seen & ~kIndexMask) != tag && atomicCAS(slot, seen, tag | kClaimed) == seen) {  // the first to ask
        const uint64_t index = uint64_t(StaticRounds) * clusters_in_grid_ + atomicAdd(workspace_, 1u);
        const uint32_t capped = uint32_t(index < kIndexMask - 1 ? index : kIndexMask - 2);  // past the end: invalid
        atomicExch(slot, tag | (capped + 1));
        return capped;
      }
      __nanosleep(128);
    }
    __trap();  // an answer never came: a bug in this scheduler, not a slow tile
    return 0;
  }

  uint32_t* workspace_ = nullptr;
  uint32_t answer_ = 0;  // the number of this role's current answer
};
#endif  // __CUDACC__

}  // namespace cutegen_sm90_gemm

#if defined(__CUDACC__)
namespace cutlass::gemm::kernel::detail {
template <class TileShape, class ClusterShape, uint32_t Stages, int StaticRounds>
struct TileSchedulerSelector<cutegen_sm90_gemm::DynamicTiles<StaticRounds>, arch::Sm90, TileShape, ClusterShape,
                             Stages> {
  using Scheduler = cutegen_sm90_gemm::DynamicTileScheduler<StaticRounds>;
};
}  // namespace cutlass::gemm::kernel::detail
#endif  // __CUDACC__
