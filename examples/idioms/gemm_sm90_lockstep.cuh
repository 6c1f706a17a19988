// gemm_sm90_lockstep.cuh -- a mainloop whose producers issue each k-step's TMA loads in lockstep across the grid:
// the 2026-12-07 test of why cuBLAS's SMs ask L2 for fewer bytes than the flagship's.
// Included by gemm_sm90_common.cuh (after CUTLASS's headers); used as Sm90Gemm's last template argument:
//   Sm90Gemm<TileShape, ClusterShape, Mainloop, Epilogue, Scheduler, EpilogueTile, Frame, cutegen_sm90_gemm::Lockstep>
// (or one of the looser barriers below: LockstepSlack1, LockstepSlack2, LockstepEvery8, LockstepPerTile,
// LockstepPoll1us, LockstepRow).
//
// Why: at 4096^3 every kernel here and cuBLAS's send L2's request coalescer (LRC) the same 8.4 M read requests,
// but it serves cuBLAS's 248 MB of them once for several SMs that asked at about the same time, the flagship's 73 MB
// (bench/gemm_traffic.py). Tile orders did not change that (gemm_sm90_grouped_tiles.cuh). The hypothesis tested
// here: what lines reads up is *when* the SMs that share an operand tile ask for it. In CUTLASS's producer each
// CTA issues a k-step's loads as soon as its own consumers free a stage, so the CTAs drift apart; here every
// producer, once it holds the free stage, waits until every CTA's producer holds its stage for the same k-step
// (a grid-wide counter), then all issue together.
//
// Measured (H100, 2026-12-07, 4096^3; bench/gemm_traffic.py and bench/gemm_timing_methods.py, 2 processes x 5 blocks,
// records in tests/records/h100/gemm_lockstep_*): every k-step in lockstep, the LRC merges 195 MB of reads several
// SMs made at once (swizzle 8: 164) where the flagship gets 48 and cuBLAS 225, and L2 serves 882 MB (flagship 1026,
// cuBLAS 849): the hypothesis holds -- SMs that ask together get merged reads. But the barrier costs a third of the
// speed: 0.653x the best cuBLAS [0.646, 0.660] by graph replay (swizzle 8: 0.632x) beside the flagship's 0.988x.
// So cuBLAS lines its SMs up without paying for it, or pays elsewhere; this barrier is not how.
// The looser barriers below (2026-12-07, H100, the same benches; records gemm_lockstep_variants_*): merged
// MB and speed against the best cuBLAS where the flagship read 0.995x in the same processes (cuBLAS merged 236):
// slack 1 138 MB 0.962x, slack 2 110 MB 0.951x, every 8th k-step 147 MB 0.910x, groups of 32 CTAs 229 MB 0.755x,
// polling every microsecond 216 MB 0.335x, once per tile 54 MB 0.978x (with the dynamic-tile records). None is as
// fast as the flagship: even merges at cuBLAS's level do not pay for any wait on the producers' path.
//
// The barrier, per group of CTAs (by default one group of all): one 64-bit counter, +1 per producer per sync point
// (every Period-th k-step, counted over all its tiles), so "every CTA of the group reached sync point p" is
// "counter >= its CTAs * p" (no CTA passes p before the slowest arrives at p, by induction); with Slack, a producer
// at p waits only until every CTA has reached p - Slack. A producer that has issued its last tile adds kRetired
// (more steps than any launch has), which releases the others for good when CTAs get unequal numbers of tiles; the
// last to retire zeroes the counters for the next launch (kernels on one stream are ordered). The wait gives up
// after about a millisecond: it is a hint about timing, never a condition of correctness, so a CTA that is not
// resident cannot hang it.
// Limits (a bench candidate, not a product kernel): one set of counters per kernel type and device, so two launches
// of the same kernel at once share them (each still correct, neither in lockstep).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

#include "gemm_sm90_producer_loop.cuh"  // load_stages: CUTLASS's producer loop with a step before the loads

namespace cutegen_sm90_gemm {

// Up to kMaxLockstepGroups groups of CTAs, each with its own counter on its own 128-byte line (its own L2 slice's
// traffic: the pollers of one group never load another's line).
constexpr int kMaxLockstepGroups = 64;
struct LockstepCounters {
  struct alignas(128) Line {
    unsigned long long arrived;  // sync points reached, summed over the group's CTAs (+ kRetired per retired CTA)
  };
  Line groups[kMaxLockstepGroups];
  unsigned int retired;  // CTAs (of the whole grid) whose producer has issued its last load
};
// One per kernel type: a variable template, so two lockstep kernels in one library never share a counter.
template <class Mainloop>
__device__ LockstepCounters lockstep_counters = {};

// GroupCtas: the CTAs that wait for each other, consecutive in the launch's linear CTA index (0: all of them).
template <class Base, int Slack, int Period, unsigned PollNs = 128, int GroupCtas = 0>
struct LockstepMainloop : Base {
  static_assert(Slack >= 0 && Period >= 1 && GroupCtas >= 0);
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;

  static constexpr unsigned long long kRetired = 1ull << 40;
  static constexpr int kMaxPolls = int(1048576 / PollNs);  // give up after ~a millisecond

  uint64_t steps = 0;        // k-steps this CTA's producer has issued, over all its tiles (lives across the tiles)
  uint64_t sync_points = 0;  // of those, the ones it synchronized at

  // CUTLASS's producer loop (CollectiveMma's load for this mainloop), with the wait between a stage's acquire and
  // its loads.
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState write,
                           cute::tuple<TensorA, TensorB> const& inputs, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int, uint32_t block_rank_in_cluster,
                           TensorStorage& shared) {
    const Group mine = group();
    load_stages<Base>(params, pipeline, write, inputs, blk_coord, k_tile_iter, k_tile_count, block_rank_in_cluster,
                      shared, OperandHints{}, [&] {
                        if (steps++ % Period == 0) {
                          arrive_and_wait(mine, ++sync_points);
                        }
                      });
  }

  CUTLASS_DEVICE void load_tail(MainloopPipeline pipeline, PipelineState write) {
    if (cute::elect_one_sync()) {
      retire();
    }
    Base::load_tail(pipeline, write);
  }

 private:
  CUTLASS_DEVICE static uint32_t ctas() { return gridDim.x * gridDim.y * gridDim.z; }

  // This CTA's group: its size and its counter. Too many groups for the counters: the whole grid is one.
  struct Group {
    uint32_t size;
    unsigned long long* arrived;
  };
  CUTLASS_DEVICE static uint32_t group_ctas() {
    const uint32_t all = ctas();
    return GroupCtas == 0 || (all + GroupCtas - 1) / GroupCtas > kMaxLockstepGroups ? all : uint32_t(GroupCtas);
  }
  CUTLASS_DEVICE static Group group() {
    const uint32_t linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);  // the scheduler's order
    const uint32_t per = group_ctas(), index = linear / per;
    return {cute::min(per, ctas() - index * per), &lockstep_counters<Base>.groups[index].arrived};
  }

  // Timing only: no data is published through the counter, so relaxed atomics and plain volatile polls suffice.
  CUTLASS_DEVICE static void arrive_and_wait(Group const& mine, uint64_t point) {
    atomicAdd(mine.arrived, 1ull);
    if (point <= Slack) {
      return;
    }
    const unsigned long long target = mine.size * (point - Slack);
    for (int poll = 0; poll < kMaxPolls; ++poll) {
      if (*reinterpret_cast<volatile unsigned long long*>(mine.arrived) >= target) {
        return;
      }
      __nanosleep(PollNs);
    }
  }

  CUTLASS_DEVICE static void retire() {
    auto& counters = lockstep_counters<Base>;
    atomicAdd(group().arrived, kRetired);
    __threadfence();  // this CTA's last additions land before the count of retired CTAs that zeroes them
    if (atomicAdd(&counters.retired, 1u) == ctas() - 1) {
      for (uint32_t i = 0; i < (ctas() + group_ctas() - 1) / group_ctas(); ++i) {
        atomicExch(&counters.groups[i].arrived, 0ull);
      }
      atomicExch(&counters.retired, 0u);
    }
  }
};

// Every k-step, all together (the first test: 0.65x the flagship's speed, H100); up to one or two k-steps apart;
// every 8th k-step; every 64th (at 4096^3 the first k-step of each 128x256 tile).
template <class Base>
using Lockstep = LockstepMainloop<Base, 0, 1>;
// Every k-step, polling every microsecond instead: whether 128 producers polling one L2 line is the cost.
template <class Base>
using LockstepPoll1us = LockstepMainloop<Base, 0, 1, 1024>;
template <class Base>
using LockstepSlack1 = LockstepMainloop<Base, 1, 1>;
template <class Base>
using LockstepSlack2 = LockstepMainloop<Base, 2, 1>;
template <class Base>
using LockstepEvery8 = LockstepMainloop<Base, 0, 8>;
template <class Base>
using LockstepPerTile = LockstepMainloop<Base, 0, 64>;
// Every k-step, in groups of 32 consecutive CTAs: at 4096^3 on 128 SMs with swizzle 1 (raster along N, 16 clusters
// of 2x1 CTAs per row of cluster tiles), the 32 CTAs of one row of cluster tiles in every wave, which read the same
// two A panels (each by 16 CTAs). The barrier's cost with a quarter of the CTAs per counter and per wait.
template <class Base>
using LockstepRow = LockstepMainloop<Base, 0, 1, 128, 32>;

}  // namespace cutegen_sm90_gemm
