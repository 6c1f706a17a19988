// gemm_sm90_grouped_tiles.cuh -- a persistent tile order of our own for the sm90 GEMMs: which output tiles the
// clusters running at the same time take, so that they read the same operand tiles at about the same time.
// Included by gemm_sm90_common.cuh (after CUTLASS's headers); used as a TileScheduler tag:
//   Sm90Gemm<TileShape, ClusterShape, Mainloop, Epilogue, cutegen_sm90_gemm::GroupedTiles<8, 4, 2>>
//
// Why: at 4096^3 the flagship and cuBLAS launch the same geometry (132 CTAs of 128x256 in 2-CTA clusters) and
// deliver the same bytes to the SMs, but cuBLAS's SMs ask L2 for 0.83x the bytes (bench/gemm_traffic.py). CUTLASS's
// order (raster + swizzle) makes a wave a compact block of tiles but walks each column of it cluster by cluster;
// this order also keeps each run of consecutive clusters a compact block, sharing A rows and B columns within it.
// Measured (H100, 2026-12-06) -- it does not help, and the hypothesis behind it is refuted:
//  * bench/cluster_placement.cu: the hardware starts consecutive clusters on consecutive TPCs, which lie in
//    different GPCs round-robin (cluster c and c + 8 share one), so a "run of consecutive clusters" is spread over
//    the GPCs; CUTLASS's swizzle 1 already gives each GPC a compact 4 x 2 block of cluster tiles, swizzle 8 a 1 x 8
//    row.
//  * SMs' reads at L2 per call (ncu): swizzle 1 1018-1022 MB, swizzle 8 1016-1022, this order as swizzle 8 (8, 8, 8)
//    1028-1035, 2 x 4 runs (8, 4, 2) 1048-1053, 4 x 2 1041, 4 x 4 1028; cuBLAS 849-861. The requests do not follow
//    which clusters run side by side or share a GPC, so cuBLAS's fewer requests are unlikely to be its order's.
//  * Graph replays against cuBLAS (2 processes x 5 blocks): (8, 8, 8) 0.981x [0.966, 0.993] and (8, 4, 2) 0.982x
//    [0.965, 0.998] where swizzle 8 read 0.988x [0.976, 1.001] beside them. Kept as a bench candidate's scheduler
//    (bench/gemm_rungs.py grouped_*), so the finding can be re-run; no kernel of the product uses it.
// The order, in cluster tiles (one cluster's CTAs cover adjacent output tiles), for rows x cols of them:
//   * bands of BandRows cluster rows, top to bottom (CUTLASS's swizzle: a wave stays within a band);
//   * within a band, chunks of ChunkCols cluster columns, left to right;
//   * within a chunk, groups of GroupRows cluster rows, top to bottom; within a group, column by column.
// Ragged edges (the last band, chunk or group shorter) keep the same nesting, so the order is a bijection onto
// every rows x cols grid (tests/engine/test_sm90_common_header.py checks it on the host).
#pragma once

#include <cstdint>

#include <cute/algorithm/functional.hpp>  // cute::min

namespace cutegen_sm90_gemm {

template <int BandRows, int ChunkCols, int GroupRows>
struct GroupedTiles {
  static_assert(BandRows > 0 && ChunkCols > 0 && GroupRows > 0 && GroupRows <= BandRows);
};

struct ClusterTile {
  int row, col;
};

// The index-th cluster tile of the order above (index < rows * cols). 32-bit arithmetic: each tile fetch runs this in
// every warp role between two tiles, and a 64-bit division costs several times a 32-bit one (with 64-bit divisions
// the 4096^3 kernel issued 5 % more instructions and ran ~3 % slower than CUTLASS's swizzle walking the same order).
CUTLASS_HOST_DEVICE ClusterTile grouped_cluster_tile(uint32_t index, int rows, int cols, int band, int chunk,
                                                     int group) {
  const int band_row = int(index / uint32_t(band * cols)) * band;
  const int band_height = cute::min(band, rows - band_row);
  const uint32_t in_band = index - uint32_t(band_row * cols);
  const int chunk_col = int(in_band / uint32_t(band_height * chunk)) * chunk;
  const int chunk_width = cute::min(chunk, cols - chunk_col);
  const uint32_t in_chunk = in_band - uint32_t(chunk_col * band_height);
  const int group_row = int(in_chunk / uint32_t(group * chunk_width)) * group;
  const int group_height = cute::min(group, band_height - group_row);
  const int in_group = int(in_chunk - uint32_t(group_row * chunk_width));
  return {band_row + group_row + in_group % group_height, chunk_col + in_group / group_height};
}

#if defined(__CUDACC__)
// CUTLASS's static persistent scheduler with the tile order replaced: each cluster walks the order above from its
// cluster index, a grid's worth of clusters at a time. Everything else (grid shape, parameters, arguments, no
// workspace) is PersistentTileSchedulerSm90's; the methods that walk tiles are redefined here, because the base's
// linear index is private to it.
template <int BandRows, int ChunkCols, int GroupRows>
class GroupedTileScheduler : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;

 public:
  using WorkTileInfo = typename Base::WorkTileInfo;

  CUTLASS_DEVICE explicit GroupedTileScheduler(Params const& params) : Base(params) {
#if defined(__CUDA_ARCH__)
    const dim3 cluster = cute::cluster_id_in_grid();
    const dim3 clusters = cute::cluster_grid_dims();
    cluster_index_ = cluster.x + uint64_t(cluster.y) * clusters.x + uint64_t(cluster.z) * clusters.x * clusters.y;
    clusters_in_grid_ = uint64_t(clusters.x) * clusters.y * clusters.z;
    const dim3 shape = cute::cluster_shape();
    cluster_m_ = int(shape.x);
    cluster_n_ = int(shape.y);
    // The parameters count CTA tiles (rounded up to whole clusters); the major divisor is the raster's major
    // extent in clusters: columns when the raster runs along N, rows along M.
    const uint64_t clusters_per_problem = params.divmod_batch_.divisor / uint64_t(cluster_m_ * cluster_n_);
    const int major = int(params.divmod_cluster_blk_major_.divisor);
    const bool along_n = params.raster_order_ == RasterOrder::AlongN;
    cols_ = along_n ? major : int(clusters_per_problem / major);
    rows_ = along_n ? int(clusters_per_problem / major) : major;
    problems_ = params.blocks_per_problem_ / params.divmod_batch_.divisor;
#endif
  }

  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) { return get_current_work(); }

  CUTLASS_DEVICE WorkTileInfo get_current_work() const { return work_for(cluster_index_); }

  CUTLASS_DEVICE void advance_to_next_work(uint32_t advance_count = 1) {
    cluster_index_ += clusters_in_grid_ * advance_count;
  }

  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    advance_to_next_work();
    return cute::make_tuple(get_current_work(), true);
  }

  template <class Pipeline, class PipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo work_tile_info, Pipeline&, PipelineState) {
    return fetch_next_work(work_tile_info);
  }

  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t advance_count = 1) const {
    return !work_for(cluster_index_ + clusters_in_grid_ * advance_count).is_valid();
  }

 protected:  // DynamicTileScheduler (gemm_sm90_dynamic_tiles.cuh) walks the same tiles in its own order
  CUTLASS_DEVICE WorkTileInfo work_for(uint64_t index) const {
    const uint64_t per_problem = uint64_t(rows_) * cols_;
    if (index >= per_problem * problems_) {
      return WorkTileInfo::invalid_work_tile();
    }
    const uint64_t problem = problems_ == 1 ? 0 : index / per_problem;
    const ClusterTile tile =
        grouped_cluster_tile(uint32_t(index - problem * per_problem), rows_, cols_, BandRows, ChunkCols, GroupRows);
    const dim3 in_cluster = cute::block_id_in_cluster();
    return {tile.row * cluster_m_ + int(in_cluster.x), tile.col * cluster_n_ + int(in_cluster.y), int(problem), true};
  }

  uint64_t cluster_index_ = 0;
  uint64_t clusters_in_grid_ = 1;
  uint64_t problems_ = 1;
  int rows_ = 0, cols_ = 0, cluster_m_ = 1, cluster_n_ = 1;
};
#endif  // __CUDACC__

}  // namespace cutegen_sm90_gemm

#if defined(__CUDACC__)
namespace cutlass::gemm::kernel::detail {
// GemmUniversal picks its scheduler through this selector; the tag above names ours.
template <class TileShape, class ClusterShape, uint32_t Stages, int BandRows, int ChunkCols, int GroupRows>
struct TileSchedulerSelector<cutegen_sm90_gemm::GroupedTiles<BandRows, ChunkCols, GroupRows>, arch::Sm90, TileShape,
                             ClusterShape, Stages> {
  using Scheduler = cutegen_sm90_gemm::GroupedTileScheduler<BandRows, ChunkCols, GroupRows>;
};
}  // namespace cutlass::gemm::kernel::detail
#endif  // __CUDACC__
