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
// Status (2026-12-07, H100): DynamicTiles<2> passes the bench's product check at three shapes and runs
// 0.955x the best cuBLAS beside the flagship's 0.985x (graph replay, 2 processes x 5 blocks), merging 67-76 MB of
// reads that several SMs asked for at once (flagship 45, cuBLAS 201) with a fifth more instructions.
// DynamicTilesShared below (one drawer per cluster, answers in shared memory, no memset): 113-119 MB merged, L2
// serves 7 % fewer bytes than for the flagship, still 1-2 % slower than the flagship in the same processes and the
// same 20.8 M warp instructions against the flagship's 16.4 M (so not the L2 polling it removed; where they come
// from is the next thing to read, PC by PC: `GEMM_CANDIDATES=dynshared2_128x256_c2x1 gpu-check.sh gemm-sass`).
// Held 4 s at the power cap it gets one clock step (7.5 MHz) over the flagship and loses more per clock.
// Bench candidates only.
#pragma once

#include <cstdint>

namespace cutegen_sm90_gemm {

template <int StaticRounds>
struct DynamicTiles {
  static_assert(StaticRounds >= 1);
};

// The same order with cuBLAS's plumbing (2026-12-07): DynamicTiles timed 0.955x the best cuBLAS beside the
// flagship's 0.985x (H100), with a memset before every launch and every warp role polling L2 for its answers.
// Here only the leader CTA's producer warp asks the counter; it publishes each answer to a per-cluster slot in
// global memory, from which the peer CTA's producer warp copies it, and each producer warp hands it to the rest of
// its CTA in shared memory (cuBLAS: STS to its own, st.async to its peer's, LDS by the readers). Nothing is zeroed
// per launch: the counters reset themselves when the last cluster has drawn its last tile, and answers in global
// memory carry the launch's generation, so none from an earlier launch is mistaken for this one's.
// PrecomputedDivisions: the cluster tile's row and column from FastDivmods made once per thread, as CUTLASS's own
// scheduler does, instead of the grouped order's four integer divisions per call (its kernel has 36 reciprocal-based
// division sequences where CUTLASS's static schedule has none, and every warp role runs them at every tile).
template <int StaticRounds, bool PrecomputedDivisions = false>
struct DynamicTilesShared {
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

// The counters of DynamicTilesShared, one set per scheduler type (a variable template, zero at module load).
// Limit (a bench candidate): two launches of one kernel type at once, on two streams, would share them and draw
// each other's tiles; kernels on one stream are ordered, so one launch resets them before the next reads them.
constexpr int kMaxDynamicClusters = 1024;
struct DynamicTileCounters {
  unsigned int next;        // tiles drawn past the static rounds in this launch
  unsigned int finished;    // clusters that have drawn past the last tile (or had none) in this launch
  unsigned int generation;  // launches finished: the tag that tells this launch's answers from stale ones
  unsigned long long answers[kMaxDynamicClusters * 4];  // per cluster a ring of 4: generation, k, index + 1
};
template <int StaticRounds, bool PrecomputedDivisions>
__device__ DynamicTileCounters dynamic_tile_counters = {};

template <int StaticRounds, bool PrecomputedDivisions>
class SharedDynamicTileScheduler : public GroupedTileScheduler<1, 1, 1> {
  using Base = GroupedTileScheduler<1, 1, 1>;
  static constexpr int kRing = 4;  // no warp role runs kRing tiles ahead of another (the pipelines bound it to ~1)
  // An answer in shared memory: bits 20-31 its number k (mod 4096), bits 0-19 the cluster tile's index + 1 (0: none).
  static constexpr uint32_t kIndexBits = 20, kIndexMask = (1u << kIndexBits) - 1;

 public:
  using WorkTileInfo = typename Base::WorkTileInfo;

  CUTLASS_DEVICE explicit SharedDynamicTileScheduler(Params const& params) : Base(params) {
#if defined(__CUDA_ARCH__)
    // Read before this cluster can draw: the last cluster's reset needs this cluster's draws, which need this
    // CTA's loads, which come after this line in every thread that reads answers.
    generation_ = *reinterpret_cast<volatile unsigned int*>(&counters().generation);
    if (threadIdx.x == 0) {  // the producer warp, which writes the first answer after its first loads
      for (int i = 0; i < kRing; ++i) {
        ring()[i] = 0;
      }
    }
    if constexpr (PrecomputedDivisions) {
      tiles_ = uint64_t(rows_) * cols_ * problems_;
      per_problem_ = cutlass::FastDivmod(rows_ * cols_);
      per_row_ = cutlass::FastDivmod(cols_);
    }
#endif
  }

  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) {
    __syncwarp();
    return drawn(cluster_index_);
  }

  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    ++answer_;
    return cute::make_tuple(next_tile(answer_), true);
  }

  template <class Pipeline, class PipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo work_tile_info, Pipeline&, PipelineState) {
    return fetch_next_work(work_tile_info);
  }

  // Not knowable before the counter answers; CUTLASS's sm90 kernels ask only with programmatic dependent launch.
  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t = 1) const { return false; }

 private:
  static CUTLASS_DEVICE DynamicTileCounters& counters() {
    return dynamic_tile_counters<StaticRounds, PrecomputedDivisions>;
  }

  // The index-th cluster tile, row by row (the base's (1, 1, 1) order).
  CUTLASS_DEVICE WorkTileInfo tile(uint64_t index) const {
    if constexpr (!PrecomputedDivisions) {
      return work_for(index);
    } else {
      if (index >= tiles_) {
        return WorkTileInfo::invalid_work_tile();
      }
      int problem, in_problem, row, col;
      per_problem_(problem, in_problem, int(index));
      per_row_(row, col, in_problem);
      const dim3 in_cluster = cute::block_id_in_cluster();
      return {row * cluster_m_ + int(in_cluster.x), col * cluster_n_ + int(in_cluster.y), problem, true};
    }
  }
  // Static shared memory, a whole 1 KB: CUTLASS's dynamic shared memory (the kernel's SharedStorage) starts after it,
  // and its swizzled TMA and GMMA buffers keep the 1024-byte phase they have without it (GMMA descriptors carry a
  // base offset of 0). The kernel's own slot for a scheduler's storage is handed over only to CUTLASS's
  // cluster-launch-control schedulers. 1 KB of the 13 KB the flagship's tile leaves free.
  static CUTLASS_DEVICE uint32_t* ring() {
    __shared__ alignas(1024) uint32_t answers[1024 / sizeof(uint32_t)];
    return answers;
  }
  static CUTLASS_DEVICE bool is_drawer() {  // the leader CTA's producer warp (CUTLASS's Mainloop warp role)
    return cute::block_rank_in_cluster() == 0 && threadIdx.x < 32;  // no shuffle: called from one lane
  }

  // The k-th cluster tile of this cluster: by launch index in the static rounds, else the cluster's k-th answer.
  // Lane 0 draws, copies or waits; the warp takes its word. The kernel asks warp-wide, but its lanes need not
  // arrive together (in the producer warp the elected lane issues the loads while the others run ahead), and a
  // lane that asked alone would draw a tile of its own: so the warp first converges.
  CUTLASS_DEVICE WorkTileInfo next_tile(uint32_t k) {
    __syncwarp();
    if (k < uint32_t(StaticRounds)) {
      return drawn(cluster_index_ + uint64_t(k) * clusters_in_grid_);
    }
    uint32_t index = 0;
    if ((threadIdx.x & 31) == 0) {
      index = is_drawer() ? draw(k) : threadIdx.x < 32 ? copy_from_leader(k) : wait_for(k);
    }
    return tile(__shfl_sync(0xffffffffu, index, 0));
  }

  // The drawer counts its cluster finished at its first tile past the end (static or drawn): the last cluster to
  // finish resets the counters for the next launch (no cluster draws again in this one).
  CUTLASS_DEVICE WorkTileInfo drawn(uint64_t index) const {
    WorkTileInfo work = tile(index);
    if (!work.is_valid() && is_drawer() && (threadIdx.x & 31) == 0) {
      DynamicTileCounters& c = counters();
      if (atomicAdd(&c.finished, 1u) == uint32_t(clusters_in_grid_) - 1) {
        c.next = 0;
        c.finished = 0;
        __threadfence();
        atomicAdd(&c.generation, 1u);
      }
    }
    return work;
  }

  CUTLASS_DEVICE uint32_t draw(uint32_t k) {
    DynamicTileCounters& c = counters();
    const uint64_t index = uint64_t(StaticRounds) * clusters_in_grid_ + atomicAdd(&c.next, 1u);
    const uint32_t capped = uint32_t(index < kIndexMask - 1 ? index : kIndexMask - 1);  // past the end: invalid
    *reinterpret_cast<volatile unsigned long long*>(slot(k)) = tag(k) | (capped + 1);
    publish(k, capped);
    drawn(capped);
    return capped;
  }

  CUTLASS_DEVICE uint32_t copy_from_leader(uint32_t k) {  // the peer CTA's producer warp
    for (int poll = 0; poll < (1 << 22); ++poll) {  // ~0.5 s of 128 ns sleeps: far past any tile's time
      const unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(slot(k));
      if ((seen & ~0xffffffffull) == tag(k)) {
        const uint32_t index = uint32_t(seen) - 1;
        publish(k, index);
        return index;
      }
      __nanosleep(128);
    }
    __trap();  // an answer never came: a bug in this scheduler, not a slow tile
    return 0;
  }

  CUTLASS_DEVICE uint32_t wait_for(uint32_t k) const {  // every other warp role, on its own CTA's shared memory
    const uint32_t want = (k & 0xfff) << kIndexBits;
    for (int poll = 0; poll < (1 << 23); ++poll) {
      const uint32_t seen = *reinterpret_cast<volatile uint32_t*>(&ring()[k % kRing]);
      if ((seen & ~kIndexMask) == want && (seen & kIndexMask) != 0) {
        return (seen & kIndexMask) - 1;
      }
      __nanosleep(64);
    }
    __trap();
    return 0;
  }

  CUTLASS_DEVICE void publish(uint32_t k, uint32_t index) const {
    *reinterpret_cast<volatile uint32_t*>(&ring()[k % kRing]) = ((k & 0xfff) << kIndexBits) | (index + 1);
  }
  CUTLASS_DEVICE unsigned long long* slot(uint32_t k) const {
    return &counters().answers[(cluster_index_ % kMaxDynamicClusters) * kRing + k % kRing];
  }
  // The launch's generation (+ 1: never the zero of a slot no launch has written) and k, in the high word.
  CUTLASS_DEVICE unsigned long long tag(uint32_t k) const {
    return (uint64_t(((generation_ + 1) << 4) | (k & 0xf))) << 32;
  }

  unsigned int generation_ = 0;
  uint32_t answer_ = 0;  // the number of this role's current answer
  uint64_t tiles_ = 0;   // PrecomputedDivisions: cluster tiles in all problems, and the two divisors
  cutlass::FastDivmod per_problem_, per_row_;
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
template <class TileShape, class ClusterShape, uint32_t Stages, int StaticRounds, bool PrecomputedDivisions>
struct TileSchedulerSelector<cutegen_sm90_gemm::DynamicTilesShared<StaticRounds, PrecomputedDivisions>, arch::Sm90,
                             TileShape, ClusterShape, Stages> {
  using Scheduler = cutegen_sm90_gemm::SharedDynamicTileScheduler<StaticRounds, PrecomputedDivisions>;
};
}  // namespace cutlass::gemm::kernel::detail
#endif  // __CUDACC__
