// gemm_sm90_common.cuh -- the Hopper bf16 GEMM ladder's shared half: C = A @ B with A (M,K) and B (K,N)
// bf16 row-major, C (M,N) bf16 row-major, fp32 accumulate, built from CUTLASS 3's CuTe collectives.
//
// Every rung (examples/idioms/gemm_sm90_<rung>/) and the flagship (examples/gemm_bf16/) is one line here:
//   using Gemm = Sm90Gemm<TileShape, ClusterShape, MainloopSchedule, EpilogueSchedule, TileScheduler>::Gemm;
//   CUTEGEN_EXPORT int cutegen_forward(...) { return launch<Gemm>(...); }
// so the four Hopper rungs -- multistage mbarrier pipeline (KernelTma), warp-specialized producer/consumer
// (KernelTmaWarpSpecialized), persistent cooperative and persistent ping-pong -- differ only in the
// schedule tags, and each is measured with the same launcher (bench/gemm_rungs.py).
//
//  * Mainloop: gemm::collective::CollectiveBuilder<Sm90, OpClassTensorOp, ...>: TMA loads into GMMA-swizzled
//    smem, WGMMA from smem descriptors, as many pipeline stages as fit beside the epilogue's smem
//    (StageCountAutoCarveout).
//  * Epilogue: epilogue::collective::CollectiveBuilder with ElementC = void (no source operand: D = acc, so
//    no C loads and no smem for C), D written as bf16 (round to nearest).
//  * Operands in CUTLASS's layout tags: A RowMajor (M,K) is K-major; B RowMajor (K,N) is N-major (CuTe's (N,K)
//    view has stride (1,N), the MN-major GMMA atoms); D RowMajor.
//    Or, with TransposedFrame (cuBLAS's), D^T = B^T A^T over the same tensors as column-major operands.
// Requirements (else cudaErrorInvalidValue): contiguous row-major bf16 2-D tensors, K % 8 == 0 and
// N % 8 == 0 (TMA needs 16-byte aligned row pitches), 16-byte aligned base pointers. M, N, K need not be
// multiples of the tile: TMA zero-fills out-of-bounds loads and clips out-of-bounds stores.
// The launch is on the caller's stream and never synchronizes; the workspace (0 bytes for these
// schedules today) is allocated once per device, stream-ordered, and reused.
#pragma once

// CUTLASS as a release build, as CUTLASS's own: without NDEBUG every CUTLASS/CuTe device assert stays in the
// kernel, and in the ping-pong schedule its registers spill (ptxas: 8 bytes, 168 registers). Scoped to this
// header, not the including file: an assert is expanded where its text is read, so the templates read here
// (CUTLASS's, CuTe's, this file's) keep the release asserts wherever they are instantiated, and after this
// header NDEBUG is what it was and <cassert> is read again, so the includer's own asserts follow its own flags.
// It works only where this header comes before any other CUTLASS/CuTe include (their include guards keep a
// header as it was first read); every includer includes it first. No build flag instead: the project has no
// per-file flags directive, and -DNDEBUG for every kernel would hide the asserts users write.
#pragma push_macro("NDEBUG")
#ifndef NDEBUG
#define NDEBUG
#endif
#include <cutegen/abi.h>

// CuTe's/CUTLASS's host-side constexpr helpers trip warnings #20013-D / #20015-D without
// --expt-relaxed-constexpr (which the project's build does not pass); they are CUTLASS-internal and harmless.
// Silenced for this header's text only (popped at its end): the includer's own code is warned as usual.
#pragma nv_diagnostic push
#pragma nv_diag_suppress 20013
#pragma nv_diag_suppress 20015
#include <array>
#include <limits>
#include <tuple>
#include <utility>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/kernel_hardware_info.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>

#include "gemm_sm90_grouped_tiles.cuh"  // GroupedTiles: a persistent tile order of our own
#include "gemm_sm90_producer_loop.cuh"  // load_stages: CUTLASS's producer loop, for the hooks below
#include "gemm_sm90_alternating_k.cuh"  // AlternatingK: every other tile's k-loop backwards (the flagship's)
#include "gemm_sm90_lockstep.cuh"        // Lockstep: producers that issue each k-step together (a bench test)
#include "gemm_sm90_dynamic_tiles.cuh"   // DynamicTiles: tiles first come first served (a bench test)
#include "gemm_sm90_warpgroup_epilogue.cuh"  // StoreStages, WarpgroupStores: epilogues of our own (bench tests)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000 && !defined(CUTLASS_ARCH_MMA_SM90A_ENABLED)
#error "the sm90 GEMM collectives use wgmma and TMA: build with -gencode arch=compute_90a,code=sm_90a"
#endif

namespace cutegen_sm90_gemm {

using namespace cute;

using Element = cutlass::bfloat16_t;
using Accumulator = float;
constexpr int kAlignment = 16 / int(sizeof(Element));  // 8 bf16 = one 16-byte TMA granule

// The frame CUTLASS computes in. RowMajorFrame: D = A @ B as the caller gives them, A (M,K) K-major, B (K,N)
// N-major, D row-major. TransposedFrame: D^T = B^T A^T over the same memory, read as column-major operands, so
// CUTLASS's M is the caller's N and its A the caller's B (make_arguments swaps them). cuBLAS is column-major and
// computes a row-major torch.matmul in this frame: its nvjet_sm90_tst_256x128_64x4_1x2 at 4096^3 is a 256x128
// tile of D^T with a 1x2 cluster, its first MMA operand our B (MN-major in shared memory), its second our A.
struct RowMajorFrame {
  using LayoutA = cutlass::layout::RowMajor;  // (M,K), K-major
  using LayoutB = cutlass::layout::RowMajor;  // (K,N), N-major
  using LayoutD = cutlass::layout::RowMajor;  // (M,N)
};
struct TransposedFrame {
  using LayoutA = cutlass::layout::ColumnMajor;  // (N,K) = B^T, N-major
  using LayoutB = cutlass::layout::ColumnMajor;  // (K,M) = A^T, K-major
  using LayoutD = cutlass::layout::ColumnMajor;  // (N,M) = D^T
};

// One GEMM type per schedule choice. TileScheduler = void for the non-persistent kernels (one CTA per tile);
// cutlass::gemm::PersistentScheduler for the persistent ones (one CTA per SM, looping over tiles).
// EpilogueTile: the (M,N) subtile the epilogue converts and stores at a time (CUTLASS picks one by default).
// TileShape, ClusterShape and EpilogueTile are in Frame's M and N.
// MainloopAs: the mainloop CUTLASS's builder gives, or a class derived from it (Lockstep, AlternatingK) that the kernel
// runs instead.
// EpilogueAs: the epilogue CUTLASS's builder gives (BuiltEpilogue), or one made from it (StoreStages, WarpgroupStores:
// gemm_sm90_warpgroup_epilogue.cuh).
template <class Mainloop>
using BuiltMainloop = Mainloop;

template <class TileShape, class ClusterShape, class MainloopSchedule, class EpilogueSchedule,
          class TileScheduler = void, class EpilogueTile = cutlass::epilogue::collective::EpilogueTileAuto,
          class Frame = RowMajorFrame, template <class> class MainloopAs = BuiltMainloop,
          class EpilogueAs = BuiltEpilogue>
struct Sm90Gemm {
  using Epilogue = typename EpilogueAs::template As<
      typename cutlass::epilogue::collective::CollectiveBuilder<
          cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
          EpilogueTile, Accumulator, Accumulator,
          void, typename Frame::LayoutD, kAlignment,      // C: none (D = acc)
          Element, typename Frame::LayoutD, kAlignment,   // D: bf16
          EpilogueSchedule>::CollectiveOp>;

  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      Element, typename Frame::LayoutA, kAlignment, Element, typename Frame::LayoutB, kAlignment, Accumulator,
      TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<int(sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, MainloopAs<Mainloop>, Epilogue,
                                                      TileScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

// A packed stride of CUTLASS's rank-3 (rows, cols, batch) kind: whichever of the first two modes is the
// static _1 is the contiguous one, the other gets the pitch.
template <class Stride>
Stride packed_stride(int64_t rows, int64_t cols) {
  Stride s{};
  if constexpr (cute::is_static<cute::remove_cvref_t<decltype(get<1>(s))>>::value) {
    get<0>(s) = cols;  // cols contiguous: pitch between rows
  } else {
    get<1>(s) = rows;  // rows contiguous: pitch between cols
  }
  get<2>(s) = rows * cols;
  return s;
}

inline bool is_bf16(const DLTensor& t) {
  return t.dtype.code == kDLBfloat && t.dtype.bits == 16 && t.dtype.lanes == 1;
}

inline bool is_row_major_2d(const DLTensor& t) {
  if (t.ndim != 2) return false;
  if (t.strides == nullptr) return true;  // DLPack: NULL strides means compact row-major
  return t.strides[1] == 1 && t.strides[0] == t.shape[1];
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// What a launch needs once per device and Gemm type: the SM count and cluster occupancy (the persistent
// scheduler sizes its grid from them) and the workspace.
struct DeviceState {
  bool ready = false;
  cutlass::KernelHardwareInfo hw;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};
constexpr int kMaxDevices = 64;

template <class Gemm>
DeviceState* device_state(cudaStream_t stream, size_t workspace_bytes) {
  static DeviceState states[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return nullptr;
  DeviceState& st = states[device];
  if (!st.ready) {
    // The occupancy query behind max_active_clusters must see the kernel's real shared-memory size.
    constexpr int smem = Gemm::GemmKernel::SharedStorageSize;
    if (smem >= (48 << 10) &&
        cudaFuncSetAttribute(cutlass::device_kernel<typename Gemm::GemmKernel>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) {
      return nullptr;
    }
    st.hw = cutlass::KernelHardwareInfo::make_kernel_hardware_info<typename Gemm::GemmKernel>(device);
    st.ready = true;
  }
  if (workspace_bytes > st.workspace_bytes) {  // grown once, stream-ordered, never freed while loaded
    if (st.workspace) cudaFreeAsync(st.workspace, stream);
    st.workspace = nullptr;
    st.workspace_bytes = 0;
    if (cudaMallocAsync(&st.workspace, workspace_bytes, stream) != cudaSuccess) return nullptr;
    st.workspace_bytes = workspace_bytes;
  }
  return &st;
}

// Run-time choices of the tile schedulers: how many tiles
// along the raster's minor direction are walked together (1, 2, 4, 8: L2 reuse of the shared operand
// tiles) and along which direction the raster runs (CUTLASS's heuristic picks by the larger of M and N).
// The stream-K scheduler also takes how the tiles are split among the SMs and how split tiles are summed.
// Its Heuristic decomposition is data-parallel whenever the last wave is at least half full (4096^3 in
// 128x256 tiles: 512 tiles = 3.88 waves of 132, so stream-K never runs); StreamK forces the last two waves'
// tiles to be shared out by k-iterations. The persistent scheduler ignores both.
using RasterOrder = cutlass::gemm::kernel::detail::RasterOrderOptions;
using Decomposition = cutlass::gemm::kernel::detail::DecompositionMode;
using Reduction = cutlass::gemm::kernel::detail::ReductionMode;
struct LaunchOptions {
  int max_swizzle = 1;
  RasterOrder raster = RasterOrder::Heuristic;
  Decomposition decomposition = Decomposition::Heuristic;
  Reduction reduction = Reduction::Deterministic;  // Nondeterministic: peers add in arrival order
  bool reuse_params = true;  // relaunch the last call's kernel parameters when its tensors recur (LastLaunch)
  // A persistent kernel's grid on the fewest SMs that keep its number of waves (even_wave_hardware): at 4096^3
  // the 128x256 tile makes 512 tiles, 4 waves on 132 SMs or on 128, so 4 SMs can idle the whole call, not the last
  // wave's 16; if the card is power-bound, the other SMs' clocks may gain from it.
  bool even_waves = false;
  int splits = 1;  // the stream-K scheduler's SplitK decomposition: how many pieces each tile's k-loop is cut into
};

// Whether a scheduler's Arguments take a decomposition (C++17: no requires-expression).
template <class SchedulerArguments, class = void>
struct takes_decomposition : std::false_type {};
template <class SchedulerArguments>
struct takes_decomposition<SchedulerArguments,
                           std::void_t<decltype(std::declval<SchedulerArguments&>().decomposition_mode)>>
    : std::true_type {};

// Everything a launch's kernel parameters are built from. Equal keys give equal Params: the TMA descriptors
// hold the pointers and extents, the scheduler its grid and options, and the SM count is the device's.
struct LaunchKey {
  int device = -1;
  int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;
  const void* B = nullptr;
  const void* D = nullptr;
  LaunchOptions options;

  bool operator==(const LaunchKey& o) const {
    return device == o.device && M == o.M && N == o.N && K == o.K && A == o.A && B == o.B && D == o.D &&
           options.max_swizzle == o.options.max_swizzle && options.raster == o.options.raster &&
           options.decomposition == o.options.decomposition && options.reduction == o.options.reduction &&
           options.even_waves == o.options.even_waves && options.splits == o.options.splits;
  }
};

// The last launch's initialized kernel, per thread and Gemm type. A caller that times or loops one GEMM
// (the same tensors call after call) relaunches it without rebuilding the arguments, re-checking them,
// re-encoding three TMA descriptors and re-setting the smem attribute: about the host time of the kernel's
// launch itself, which shows in per-call timings of short GEMMs. A kernel with a workspace (stream-K, split-K)
// keeps its Params too but has the workspace zeroed again before every launch (its flags and partial sums must
// start at zero), from the arguments it was initialized with. Measured (H100, bench/gemm_timing_methods.py
// --shape 512 512 512, 2 processes x 5 blocks): 1.135x [1.109, 1.197] the calls per second back to back of a
// build that rebuilds every call (coop_128x256_c2x1_sw1_rebuild); 1.000x at 4096^3. A split kernel's kept Params
// (H100, 256x512x8192, one process x 5 blocks, splitk8_128x64_c1x1_nondet beside its _rebuild twin): back to back
// 1.273x [1.148, 1.356] cuBLAS's calls per second where rebuilt every call 1.014x [0.951, 1.021]; by graph replay
// (GPU time alone) 0.831x and 0.844x, the same.
// thread_local, so two threads launching at once never share a Params being rewritten.
template <class Gemm>
struct LastLaunch {
  bool valid = false;
  LaunchKey key;
  Gemm gemm;
  typename Gemm::Arguments args;  // as initialized (hw_info filled in): what the workspace is zeroed from
  void* workspace = nullptr;      // the one the Params point into (0 bytes: none)
  size_t workspace_bytes = 0;
};

// The hardware a persistent kernel of M x N's tiles is launched on when its waves are evened out: as many whole
// clusters as the fewest SMs that still take every tile in the same number of waves (tiles 512, SMs 132: 4 waves,
// 128 SMs). The scheduler sizes its grid from sm_count and max_active_clusters, so both shrink. Tiles are counted
// as the persistent scheduler walks them: rounded up to whole clusters, then to whole swizzle groups (its
// get_log_swizzle_size), for those padded tiles take turns too.
template <class Gemm>
cutlass::KernelHardwareInfo even_wave_hardware(cutlass::KernelHardwareInfo hw, int64_t M, int64_t N, int max_swizzle) {
  using Tile = typename Gemm::GemmKernel::TileShape;
  using Cluster = typename Gemm::GemmKernel::ClusterShape;
  using SchedulerParams = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params;
  constexpr int64_t tile_m = size<0>(Tile{}), tile_n = size<1>(Tile{});
  constexpr int64_t cluster_m = size<0>(Cluster{}), cluster_n = size<1>(Cluster{});
  constexpr int64_t cluster = cluster_m * cluster_n;
  const auto round_up = [](int64_t x, int64_t to) { return (x + to - 1) / to * to; };
  int64_t blocks_m = round_up((M + tile_m - 1) / tile_m, cluster_m);
  int64_t blocks_n = round_up((N + tile_n - 1) / tile_n, cluster_n);
  const int swizzle = 1 << SchedulerParams::get_log_swizzle_size(int(blocks_m), int(blocks_n), max_swizzle);
  blocks_m = round_up(blocks_m, swizzle * cluster_m);
  blocks_n = round_up(blocks_n, swizzle * cluster_n);
  const int64_t tiles = blocks_m * blocks_n;
  if (hw.sm_count <= 0 || tiles <= 0) return hw;
  const int64_t waves = (tiles + hw.sm_count - 1) / hw.sm_count;
  const int64_t clusters = ((tiles + waves - 1) / waves + cluster - 1) / cluster;
  if (clusters * cluster < hw.sm_count) {
    hw.sm_count = int(clusters * cluster);
    if (hw.max_active_clusters > clusters) hw.max_active_clusters = int(clusters);
  }
  return hw;
}

// cutegen_forward's code for a CUTLASS call that failed: the CUDA error it left, else `fallback` (CUTLASS reports
// its own refusals as a Status, with no CUDA error behind them).
inline int last_error_or(cudaError_t fallback) {
  const cudaError_t err = cudaGetLastError();
  return err != cudaSuccess ? int(err) : int(fallback);
}

// Initializes last.gemm for last.args (checked, hw_info filled in, Params built, the workspace grown and zeroed)
// and records the workspace the Params point into; cudaSuccess or the error code cutegen_forward returns.
template <class Gemm>
int initialize(LastLaunch<Gemm>& last, cudaStream_t stream, const LaunchOptions& options) {
  auto& args = last.args;
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
  DeviceState* st = device_state<Gemm>(stream, 0);
  if (st == nullptr) return cudaErrorInvalidValue;
  args.hw_info = st->hw;
  if (options.even_waves) {
    args.hw_info = even_wave_hardware<Gemm>(st->hw, get<0>(args.problem_shape), get<1>(args.problem_shape),
                                            options.max_swizzle);
  }
  last.workspace_bytes = Gemm::get_workspace_size(args);
  st = device_state<Gemm>(stream, last.workspace_bytes);
  if (st == nullptr) return cudaErrorMemoryAllocation;
  last.workspace = last.workspace_bytes == 0 ? nullptr : st->workspace;
  if (last.gemm.initialize(args, st->workspace, stream) != cutlass::Status::kSuccess) {
    return last_error_or(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

// Whether Gemm computes in the TransposedFrame: its A is M-major there, which the caller's row-major A never is.
template <class Gemm>
constexpr bool computes_transpose =
    cute::is_static<cute::remove_cvref_t<decltype(get<0>(typename Gemm::GemmKernel::StrideA{}))>>::value;

// key's M and N in Gemm's frame.
template <class Gemm>
std::pair<int64_t, int64_t> frame_mn(const LaunchKey& key) {
  if constexpr (computes_transpose<Gemm>) return {key.N, key.M};
  return {key.M, key.N};
}

template <class Gemm>
typename Gemm::Arguments make_arguments(const LaunchKey& key) {
  using Kernel = typename Gemm::GemmKernel;
  const auto [M, N] = frame_mn<Gemm>(key);
  const int64_t K = key.K;
  const void* A = computes_transpose<Gemm> ? key.B : key.A;  // D^T = B^T A^T: CUTLASS's A is the caller's B
  const void* B = computes_transpose<Gemm> ? key.A : key.B;
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {int(M), int(N), int(K), 1},
      {static_cast<const Element*>(A), packed_stride<typename Kernel::StrideA>(M, K),
       static_cast<const Element*>(B), packed_stride<typename Kernel::StrideB>(N, K)},
      {{}, nullptr, packed_stride<typename Kernel::StrideC>(M, N),
       static_cast<Element*>(const_cast<void*>(key.D)), packed_stride<typename Kernel::StrideD>(M, N)},
      cutlass::KernelHardwareInfo{}};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.scheduler.max_swizzle_size = key.options.max_swizzle;  // every sm90 kernel's scheduler takes these two
  args.scheduler.raster_order = key.options.raster;
  if constexpr (takes_decomposition<decltype(args.scheduler)>::value) {  // the stream-K scheduler's
    args.scheduler.decomposition_mode = key.options.decomposition;
    args.scheduler.reduction_mode = key.options.reduction;
    args.scheduler.splits = key.options.splits;
  }
  return args;
}

// Checks the ABI tensors of C = A @ B and describes the launch in `key`: cudaSuccess, or the error code
// cutegen_forward returns.
inline int describe_launch(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                           LaunchOptions options, LaunchKey* key) {
  if (num_inputs != 2 || num_outputs != 1) return cudaErrorInvalidValue;
  const DLTensor& a = inputs[0];
  const DLTensor& b = inputs[1];
  const DLTensor& d = outputs[0];
  if (!is_bf16(a) || !is_bf16(b) || !is_bf16(d)) return cudaErrorInvalidValue;
  if (!is_row_major_2d(a) || !is_row_major_2d(b) || !is_row_major_2d(d)) return cudaErrorInvalidValue;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K || d.shape[0] != M || d.shape[1] != N) return cudaErrorInvalidValue;
  if (M <= 0 || N <= 0 || K <= 0 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) return cudaErrorInvalidValue;
  // TMA: every row pitch a multiple of 16 bytes (A's is K, B's and D's N elements).
  if (K % kAlignment != 0 || N % kAlignment != 0) return cudaErrorInvalidValue;
  key->M = M, key->N = N, key->K = K, key->options = options;
  key->A = cutegen_data<const Element>(a);
  key->B = cutegen_data<const Element>(b);
  key->D = cutegen_data<Element>(d);
  if (!aligned16(key->A) || !aligned16(key->B) || !aligned16(key->D)) return cudaErrorInvalidValue;
  if (cudaGetDevice(&key->device) != cudaSuccess) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Whether the workspace last's Params point into is still this device's for Gemm: another thread's larger shape
// may have replaced it (device_state grows it), and then the Params must be built anew.
template <class Gemm>
bool workspace_kept(const LastLaunch<Gemm>& last, cudaStream_t stream) {
  if (last.workspace_bytes == 0) return true;
  const DeviceState* st = device_state<Gemm>(stream, 0);
  return st != nullptr && st->workspace == last.workspace;
}

// Builds (or reuses, see LastLaunch) Gemm's kernel parameters for `key` and runs it on `stream`.
template <class Gemm>
int run(const LaunchKey& key, cudaStream_t stream) {
  thread_local LastLaunch<Gemm> last;
  if (!(key.options.reuse_params && last.valid && last.key == key && workspace_kept(last, stream))) {
    last.valid = false;
    last.args = make_arguments<Gemm>(key);
    if (const int err = initialize(last, stream, key.options); err != cudaSuccess) return err;
    last.key = key;
    last.valid = true;
  } else if (last.workspace_bytes != 0 &&
             Gemm::GemmKernel::initialize_workspace(last.args, last.workspace, stream) != cutlass::Status::kSuccess) {
    last.valid = false;
    return last_error_or(cudaErrorLaunchFailure);
  }
  if (last.gemm.run(stream) != cutlass::Status::kSuccess) {
    last.valid = false;
    return last_error_or(cudaErrorLaunchFailure);
  }
  return int(cudaGetLastError());
}

// The cutegen_forward body every rung shares: check the ABI tensors, build (or reuse) the kernel's
// parameters, run on `stream`.
template <class Gemm>
int launch(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs, cudaStream_t stream,
           LaunchOptions options = {}) {
  LaunchKey key;
  if (const int err = describe_launch(inputs, num_inputs, outputs, num_outputs, options, &key); err != cudaSuccess) {
    return err;
  }
  return run<Gemm>(key, stream);
}

// How many of Gemm's output tiles C = A @ B makes.
template <class Gemm>
int64_t output_tiles(const LaunchKey& key) {
  using Tile = typename Gemm::GemmKernel::TileShape;
  constexpr int64_t tile_m = size<0>(Tile{}), tile_n = size<1>(Tile{});
  const auto [M, N] = frame_mn<Gemm>(key);
  return ((M + tile_m - 1) / tile_m) * ((N + tile_n - 1) / tile_n);
}

// Gemm's time for key's shape, up to a common factor: its waves (a persistent kernel's SMs each take a tile at a
// time, so 1.1 waves cost 2) x one tile's work (M x N; K is the same for every choice) / its throughput per SM
// relative to the other choices'. Wave quantization is what the choice is about: at 3072^3 the 128x256 tile makes
// 288 tiles = 2.2 waves of 132 (paid as 3) where 128x192 makes 384 = 2.9.
template <class Gemm>
double wave_cost(const LaunchKey& key, int sm_count, double efficiency) {
  using Tile = typename Gemm::GemmKernel::TileShape;
  const int64_t waves = (output_tiles<Gemm>(key) + sm_count - 1) / sm_count;
  return double(waves) * double(size<0>(Tile{}) * size<1>(Tile{})) / efficiency;
}

// A choice for launch_cheapest: Gemm (a stream-K scheduler's) with each tile's k-loop cut into Splits pieces
// (SplitK decomposition) that are added into a workspace in arrival order (Reduction::Nondeterministic, so the
// bits of a sum may differ between calls). For shapes of few tiles and a long k-loop, where every other choice
// leaves most SMs idle (256x512x8192: 16 tiles of 128x64 for 132 SMs). Adding them in a fixed order made each
// piece wait for the one before it: 0.47-0.48x cuBLAS where arrival order reads 0.76x (H100, 128x128, 8 pieces).
// PieceK: the k-loop a piece costs on top of its share of K (its partial tile written to the workspace, waited for
// and added; the workspace zeroed each call), in k elements: a figure of that kernel, measured with it (the
// flagship's, beside its efficiencies).
template <class G, int Splits, int PieceK>
struct SplitK {
  using Gemm = G;
  static constexpr int splits = Splits;
  static constexpr double piece_k = PieceK;
};

template <class Choice>
struct split_k_choice : std::false_type {};
template <class G, int S, int P>
struct split_k_choice<SplitK<G, S, P>> : std::true_type {};

// A split choice's time in wave_cost's units: only where all of its pieces fit one wave (more pieces than SMs
// would queue behind each other's k-loops), each piece a 1/Splits share of the k-loop plus its PieceK.
template <class Choice>
double choice_cost(const LaunchKey& key, int sm_count, double efficiency) {
  if constexpr (split_k_choice<Choice>::value) {
    using Tile = typename Choice::Gemm::GemmKernel::TileShape;
    if (output_tiles<typename Choice::Gemm>(key) * Choice::splits > sm_count) {
      return std::numeric_limits<double>::infinity();
    }
    const double share = 1.0 / Choice::splits + Choice::piece_k / double(key.K);
    return share * double(size<0>(Tile{}) * size<1>(Tile{})) / efficiency;
  } else {
    return wave_cost<Choice>(key, sm_count, efficiency);
  }
}

// Runs a choice: a Gemm as key says, a split one with its decomposition (its grid is its pieces: no even waves).
template <class Choice>
int run_choice(const LaunchKey& key, cudaStream_t stream) {
  if constexpr (split_k_choice<Choice>::value) {
    LaunchKey split = key;
    split.options.decomposition = Decomposition::SplitK;
    split.options.reduction = Reduction::Nondeterministic;
    split.options.splits = Choice::splits;
    split.options.even_waves = false;
    return run<typename Choice::Gemm>(split, stream);
  } else {
    return run<Choice>(key, stream);
  }
}

template <class... Gemms, size_t... I>
size_t cheapest_choice(const LaunchKey& key, int sm_count, const std::array<double, sizeof...(Gemms)>& efficiency,
                       std::index_sequence<I...>) {
  const double cost[] = {choice_cost<Gemms>(key, sm_count, efficiency[I])...};
  size_t best = 0;
  for (size_t i = 1; i < sizeof...(Gemms); ++i) {
    if (cost[i] < cost[best]) best = i;
  }
  return best;
}

// The index of whichever of Gemms costs least for key's shape on sm_count SMs (a tie keeps the earlier choice).
template <class... Gemms>
size_t cheapest_choice(const LaunchKey& key, int sm_count, const std::array<double, sizeof...(Gemms)>& efficiency) {
  return cheapest_choice<Gemms...>(key, sm_count, efficiency, std::index_sequence_for<Gemms...>{});
}

template <class... Gemms, size_t... I>
int run_cheapest(const LaunchKey& key, cudaStream_t stream, int sm_count,
                 const std::array<double, sizeof...(Gemms)>& efficiency, std::index_sequence<I...> order) {
  const size_t best = cheapest_choice<Gemms...>(key, sm_count, efficiency, order);
  int rc = cudaErrorInvalidValue;
  ((I == best ? (rc = run_choice<Gemms>(key, stream), 0) : 0), ...);
  return rc;
}

// Runs whichever of Gemms (a Gemm, or SplitK<Gemm, n, k>; the first a Gemm) has the least cost for key's shape on this
// device, `efficiency[i]` being Gemms[i]'s throughput per SM relative to the others' (measured; see the flagship's
// header).
template <class... Gemms>
int run_cheapest(const LaunchKey& key, cudaStream_t stream, const std::array<double, sizeof...(Gemms)>& efficiency) {
  using First = std::tuple_element_t<0, std::tuple<Gemms...>>;
  const DeviceState* st = device_state<First>(stream, 0);
  if (st == nullptr) return cudaErrorInvalidValue;
  return run_cheapest<Gemms...>(key, stream, st->hw.sm_count, efficiency, std::index_sequence_for<Gemms...>{});
}

// The cutegen_forward body of a kernel that holds several Gemms: launch's, choosing by run_cheapest.
template <class... Gemms>
int launch_cheapest(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs, cudaStream_t stream,
                    const std::array<double, sizeof...(Gemms)>& efficiency, LaunchOptions options = {}) {
  LaunchKey key;
  if (const int err = describe_launch(inputs, num_inputs, outputs, num_outputs, options, &key); err != cudaSuccess) {
    return err;
  }
  return run_cheapest<Gemms...>(key, stream, efficiency);
}

}  // namespace cutegen_sm90_gemm

#pragma nv_diagnostic pop
#pragma pop_macro("NDEBUG")
#include <cassert>  // assert as the includer's NDEBUG says (<cassert> defines it anew on every inclusion)
