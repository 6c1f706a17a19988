// gemm_sm90_warpgroup_epilogue.cuh -- a TMA epilogue in which each consumer warpgroup stores its own rows of the
// tile, as cuBLAS's 4096^3 kernel does (a bench test; included by gemm_sm90_common.cuh).
//
// Why: CUTLASS's cooperative epilogue converts and stores a 128x256 tile in eight 128x32 subtiles, and at each one
// both consumer warpgroups meet twice at a 256-thread barrier, once after their shared-memory writes and once after
// warp 0 has waited for the previous subtile's TMA store to read its buffer (SASS: BAR.SYNC 0x1, 0x100; DEPBAR.LE
// SB0, 0x1). The tensor cores idle meanwhile, and a warpgroup that finished its MMAs first waits for the other.
// cuBLAS's listing (tests/records/h100/gemm_sass_cublas_listing.txt) stores per warpgroup instead: each writes its
// 64 rows of a subtile to a buffer of its own and issues its own TMA store, kept in step by its own 128 threads only.
//
// WarpgroupStores<Stages>: the builder's epilogue (the D = accumulator one: no C, no scaling; see the static_asserts)
// with its store() replaced. Warpgroup w writes rows [64w, 64w + 64) of each subtile into its half of one of Stages
// shared-memory buffers (the builder's D buffers, Stages of them, split by rows) and stores that half with a TMA
// descriptor of a 64-row box. One barrier of the warpgroup per subtile: before it, the warpgroup's storing warp waits
// until the buffer the *next* subtile will write has been read by its TMA store (so with Stages buffers the store
// issued Stages - 1 subtiles earlier), then the warp issues this subtile's store. The buffers cycle across tiles
// (a tile's subtile count is a multiple of Stages), and store_tail (CUTLASS's) waits for the last stores.
#pragma once

namespace cutegen_sm90_gemm {

using namespace cute;

// The builder's TMA epilogue with StoreStages shared-memory buffers for D instead of its min(subtiles, 2). With two,
// each subtile waits, behind two barriers of both consumer warpgroups, until the previous subtile's TMA store has
// read its buffer (SASS: DEPBAR.LE SB0, 0x1 between BAR.SYNCs): at 128x256 that is 8 waits per tile while the tensor
// cores idle. With S buffers the wait is for the store issued S - 1 subtiles earlier. The mainloop's stage count is
// computed after this (StageCountAutoCarveout of the epilogue's SharedStorage), so buffers come out of its stages
// only where the two no longer fit.
template <class Epilogue, int StoreStages>
struct WithStoreStages;  // only CUTLASS's TMA epilogue has D buffers to set
template <int StoreStages, int StagesC, int StagesD, int FragmentSize, bool ReuseSmemC, bool DelayTmaStore,
          class... Rest>
struct WithStoreStages<cutlass::epilogue::collective::CollectiveEpilogue<
                           cutlass::epilogue::Sm90TmaWarpSpecialized<StagesC, StagesD, FragmentSize, ReuseSmemC,
                                                                     DelayTmaStore>,
                           Rest...>,
                       StoreStages> {
  static_assert(!ReuseSmemC, "D's buffers are C's here: set C's stages instead");
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      cutlass::epilogue::Sm90TmaWarpSpecialized<StagesC, StoreStages, FragmentSize, ReuseSmemC, DelayTmaStore>,
      Rest...>;
};

template <class BuiltEpilogue, int Stages>
class WarpgroupStoreEpilogue : public WithStoreStages<BuiltEpilogue, Stages>::type {
  using Base = typename WithStoreStages<BuiltEpilogue, Stages>::type;
  using Tile = typename Base::CtaTileMNK;
  using SubTile = typename Base::EpilogueTile;
  using Stored = typename Base::ElementD;  // bf16 (named apart: the kernel reads ElementD, public in Base)
  static constexpr int kRows = size<0>(SubTile{});
  static constexpr int kCols = size<1>(SubTile{});
  static constexpr int kWarpgroupRows = kRows / 2;
  static constexpr int kSubtiles = size<1>(Tile{}) / kCols;
  // Every warpgroup's half of every buffer, the layout the builder gives D's buffers (its swizzle atom spans a
  // subtile's columns, so a buffer's rows 0-63 are its first half, contiguous).
  using HalfLayout = decltype(tile_to_shape(typename Base::SmemLayoutAtomD{},
                                            make_shape(Int<kWarpgroupRows>{}, Int<kCols>{})));
  using FullLayout = decltype(tile_to_shape(typename Base::SmemLayoutAtomD{},
                                            make_shape(Int<kRows>{}, Int<kCols>{}, Int<Stages>{}),
                                            Step<_1, _2, _3>{}));
  static_assert(is_void_v<typename Base::ElementC>, "the D = accumulator epilogue only (no C operand)");
  static_assert(size<0>(Tile{}) == kRows && kRows == 128, "two consumer warpgroups, one 128-row subtile per column");
  static_assert(size<1>(typename Base::SmemLayoutAtomD{}) == kCols, "a buffer's halves must be contiguous");
  static_assert(Stages >= 2 && kSubtiles % Stages == 0, "buffers cycle by subtile, across tiles");

 public:
  using typename Base::Arguments;
  using TensorStorage = typename Base::TensorStorage;
  using HalfStore = decltype(make_tma_copy_C_sm90(
      SM90_TMA_STORE{},
      make_tensor(make_gmem_ptr<Stored>(nullptr), repeat_like(typename Base::StrideD{}, int32_t(0)),
                  typename Base::StrideD{}),
      HalfLayout{}, make_shape(Int<kWarpgroupRows>{}, Int<kCols>{})));
  struct Params : Base::Params {
    HalfStore half_store;
  };

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const& problem_shape, Arguments const& args,
                                                  void* workspace) {
    auto [M, N, K, L] = append<4>(problem_shape, 1);
    Tensor d = make_tensor(make_gmem_ptr<Stored>(const_cast<Stored*>(args.ptr_D)),
                           make_layout(make_shape(M, N, L), args.dD));
    return {Base::to_underlying_arguments(problem_shape, args, workspace),
            make_tma_copy_C_sm90(SM90_TMA_STORE{}, d, HalfLayout{}, make_shape(Int<kWarpgroupRows>{}, Int<kCols>{}))};
  }

  CUTLASS_DEVICE static void prefetch_tma_descriptors(Params const& params) {
    cute::prefetch_tma_descriptor(params.half_store.get_tma_descriptor());
  }

  CUTLASS_DEVICE WarpgroupStoreEpilogue(Params const& params, TensorStorage& shared)
      : Base(params, shared), half_store_(params.half_store) {}

  template <class ProblemShapeMNKL, class TileShapeMNK, class TileCoordMNKL, class Accumulators, class TiledMma>
  CUTLASS_DEVICE auto store(typename Base::LoadPipeline, typename Base::LoadPipelineState load_state,
                            typename Base::StorePipeline, typename Base::StorePipelineState store_state,
                            ProblemShapeMNKL problem_shape, TileShapeMNK, TileCoordMNKL tile_coord,
                            Accumulators const& accumulators, TiledMma tiled_mma, int thread_idx,
                            TensorStorage& shared, int subtile_idx = -1) {
    auto [M, N, K, L] = problem_shape;
    auto [m, n, k, l] = tile_coord;
    int const warpgroup = thread_idx / cutlass::NumThreadsPerWarpGroup;
    bool const stores = thread_idx % cutlass::NumThreadsPerWarpGroup < cutlass::NumThreadsPerWarp;  // the warpgroup's first warp
    Stored* buffers = shared.collective.smem_D.begin();

    // Registers -> shared memory, as CUTLASS partitions it: each thread writes only its warpgroup's rows.
    Tensor sD = as_position_independent_swizzle_tensor(make_tensor(make_smem_ptr(buffers), FullLayout{}));
    auto r2s = make_tiled_copy_S(Copy_Atom<typename Base::CopyOpR2S, Stored>{},
                                 make_tiled_copy_C_atom(typename Base::CopyAtomC{}, tiled_mma));
    auto thread_r2s = r2s.get_slice(thread_idx);
    Tensor tRS_sD = thread_r2s.partition_D(sD);                                     // (R2S, R2S_M, R2S_N, STAGE)
    Tensor tRS_rD = make_tensor<Stored>(take<0, 3>(shape(thread_r2s.partition_S(sD))));
    constexpr int kFragment = size(SubTile{}) / (2 * cutlass::NumThreadsPerWarpGroup);
    Tensor tRS_rAcc = thread_r2s.retile_S(accumulators);                            // (R2S, MMA_M, MMA_N)
    static_assert(decltype(size<1>(tRS_rAcc))::value == 1, "one MMA tile of 128 rows");
    constexpr int kMmaCols = size<1>(Tile{}) / decltype(size<2>(tRS_rAcc))::value;  // columns per MMA tile
    static_assert(kMmaCols % kCols == 0, "a subtile within one MMA tile");
    Tensor acc = recast<cutlass::Array<float, kFragment>>(tRS_rAcc);
    Tensor out = recast<cutlass::Array<Stored, kFragment>>(tRS_rD);

    // Shared memory -> global memory: this warpgroup's 64 rows of each subtile.
    Tensor gD = local_tile(half_store_.get_tma_tensor(make_shape(M, N, L)), take<0, 2>(Tile{}), make_coord(m, n, l));
    Tensor gD_half = flat_divide(gD, make_shape(Int<kWarpgroupRows>{}, Int<kCols>{}));  // (64, COLS, 2, SUBTILE)
    auto s2g = half_store_.get_slice(Int<0>{});

    CUTLASS_PRAGMA_UNROLL
    for (int subtile = 0; subtile < kSubtiles; ++subtile) {
      int const stage = subtile % Stages;
      int const mma_n = subtile * kCols / kMmaCols;
      int const first = (subtile % (kMmaCols / kCols)) * size(out);
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < size(out); ++v) {
        out(v) = cutlass::NumericArrayConverter<Stored, float, kFragment, cutlass::FloatRoundStyle::round_to_nearest>{}(
            acc(first + v, 0, mma_n));
      }
      copy(r2s, tRS_rD, tRS_sD(_, _, _, stage));
      cutlass::arch::fence_view_async_shared();  // the writes, visible to the TMA unit
      if (stores) tma_store_wait<Stages - 2>();   // the next subtile's buffer, read by its last store
      cutlass::arch::NamedBarrier::sync(cutlass::NumThreadsPerWarpGroup, warpgroup);
      if (stores) {
        Tensor half = as_position_independent_swizzle_tensor(make_tensor(
            make_smem_ptr(buffers + (stage * kRows + warpgroup * kWarpgroupRows) * kCols), HalfLayout{}));
        copy(half_store_, s2g.partition_S(half), s2g.partition_D(gD_half(_, _, warpgroup, subtile)));
        tma_store_arrive();
      }
    }
    return cute::make_tuple(load_state, store_state);
  }

 private:
  HalfStore const& half_store_;
};

// The Sm90Gemm EpilogueAs hooks: the builder's epilogue as is, with more D buffers, or stored per warpgroup.
struct BuiltEpilogue {
  template <class Epilogue>
  using As = Epilogue;
};
template <int Stages>
struct StoreStages {
  template <class Epilogue>
  using As = typename WithStoreStages<Epilogue, Stages>::type;
};
template <int Stages>
struct WarpgroupStores {
  template <class Epilogue>
  using As = WarpgroupStoreEpilogue<Epilogue, Stages>;
};

}  // namespace cutegen_sm90_gemm
