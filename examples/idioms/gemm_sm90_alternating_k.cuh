// gemm_sm90_alternating_k.cuh -- a mainloop whose producer walks the k-loop backwards on every other tile of its
// CTA, so each wave of a persistent schedule starts on the operand panels L2 still holds from the last one (the
// flagship's 128x256 and 128x192 kernels since 2026-12-07).
// Included by gemm_sm90_common.cuh (after CUTLASS's headers); used as Sm90Gemm's MainloopAs:
//   Sm90Gemm<TileShape, ClusterShape, Mainloop, Epilogue, Scheduler, EpilogueTile, Frame,
//            cutegen_sm90_gemm::AlternatingK, ...>
// (AlternatingK keeps CUTLASS's producer loop and hands it a backward iterator; AlternatingKStreamed runs that loop
// as gemm_sm90_producer_loop.cuh writes it, with an L2 eviction hint per operand, below.)
//
// Why: at 4096^3 the flagship reads 168 MB from HBM for 64 MB of operands, cuBLAS 150 (bench/gemm_traffic.py).
// In a persistent schedule every CTA starts its n-th tile at about the same time as the others start theirs, so
// the n-th tiles make the n-th wave; with the flagship's order (raster along N, swizzle 1) a wave of 128 tiles is
// 8 tile rows x all 16 tile columns and reads all of B again (32 MB). Each wave walks k from 0 up, so when the
// next wave asks for k = 0, L2 holds the last k-steps the previous wave read, not the first. Walking every other
// tile backwards, a wave starts at the end of k where the previous one finished, on the panels L2 still holds.
// Every kernel here is at the power cap at 4096^3 (reason 0x4 in every sample, 2026-12-07), where the
// energy an HBM byte costs is clock the tensor cores lose.
//
// Measured (H100, 2026-12-07, bench/gemm_traffic.py and bench/gemm_timing_methods.py; records in
// tests/records/h100/gemm_*altk*): 4096^3 reads 127.9 MB from HBM instead of 167.8, 3072^3 49.6 instead of 61.6;
// at the power cap the 4096^3 kernel runs 680 TFLOP/s at 1410 MHz where walking forwards it ran 668 at 1380; by
// graph replay 1.006x the best cuBLAS [1.003, 1.008] (18 processes) where the forward twin read 1.001x.
// Where a CTA's n-th tile is not in the n-th wave (a grid that is not full, other schedulers) only the L2 hits
// are lost, never correctness: any order of a tile's k-steps sums the same product.
//
// What changes: only the order in which the producer issues a tile's k-steps. The consumers take the stages as
// they come; each tile's sum is still one fixed order per tile, so a call's bits are the same call after call
// (the order differs from the forward kernel's on odd tiles: a rounding-level difference).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

#include "gemm_sm90_producer_loop.cuh"  // load_stages: CUTLASS's producer loop with hints

namespace cutegen_sm90_gemm {

// CUTLASS's k-tile iterator, read backwards: the producer's load uses only *it (the k-tile) and ++it (the next one).
struct BackwardKTiles {
  int k;
  CUTLASS_DEVICE int operator*() const { return k; }
  CUTLASS_DEVICE BackwardKTiles& operator++() {
    --k;
    return *this;
  }
};

// StreamOnce: also load the operand that no later wave reads again evict-first (its panels are new in every wave:
// A when CUTLASS's Heuristic rasters along N, as at 4096^3), so L2 keeps the other one, which the next wave reads
// again, longer. Evict-first only demotes: nothing is pinned in L2 past the call, so a flush still empties it.
template <class Base, bool StreamOnce>
struct AlternatingKMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;

  int tiles = 0;  // tiles this thread's producer has loaded: the kernel keeps one mainloop object across its tiles

  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState write,
                           cute::tuple<TensorA, TensorB> const& inputs, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int thread_idx, uint32_t block_rank_in_cluster,
                           TensorStorage& shared) {
    const bool backwards = tiles++ % 2 == 1;
    const BackwardKTiles last{int(*k_tile_iter) + k_tile_count - 1};
    if constexpr (StreamOnce) {
      backwards ? load_hinted(params, pipeline, write, inputs, blk_coord, last, k_tile_count, block_rank_in_cluster,
                              shared)
                : load_hinted(params, pipeline, write, inputs, blk_coord, k_tile_iter, k_tile_count,
                              block_rank_in_cluster, shared);
    } else if (backwards) {
      Base::load(params, pipeline, write, inputs, blk_coord, last, k_tile_count, thread_idx, block_rank_in_cluster,
                 shared);
    } else {
      Base::load(params, pipeline, write, inputs, blk_coord, k_tile_iter, k_tile_count, thread_idx,
                 block_rank_in_cluster, shared);
    }
  }

 private:
  // CUTLASS's producer loop with an L2 eviction hint per operand.
  template <class TensorA, class TensorB, class KTiles, class BlockCoord>
  CUTLASS_DEVICE void load_hinted(Params const& params, MainloopPipeline pipeline, PipelineState write,
                                  cute::tuple<TensorA, TensorB> const& inputs, BlockCoord const& blk_coord,
                                  KTiles k_tile, int k_tile_count, uint32_t block_rank_in_cluster,
                                  TensorStorage& shared) {
    using Hint = cute::TMA::CacheHintSm90;
    // CUTLASS's Heuristic raster runs along N unless there are more N tiles than M tiles: then each wave spans whole
    // rows of tiles, reads all of B again and new A panels. Inputs: (BLK_M,BLK_K,m,k,l) and (BLK_N,BLK_K,n,k,l).
    const bool a_streams = cute::size<2>(cute::get<1>(inputs)) <= cute::size<2>(cute::get<0>(inputs));
    const OperandHints hints{a_streams ? Hint::EVICT_FIRST : Hint::EVICT_NORMAL,
                             a_streams ? Hint::EVICT_NORMAL : Hint::EVICT_FIRST};
    load_stages<Base>(params, pipeline, write, inputs, blk_coord, k_tile, k_tile_count, block_rank_in_cluster, shared,
                      hints, [] {});
  }
};

template <class Base>
using AlternatingK = AlternatingKMainloop<Base, false>;
template <class Base>
using AlternatingKStreamed = AlternatingKMainloop<Base, true>;

}  // namespace cutegen_sm90_gemm
