"""GPU: the Hopper bf16 GEMM ladder against cuBLAS. Every rung (examples/idioms/gemm_sm80_mma_sync,
gemm_sm90_tma_wgmma, gemm_sm90_pipelined, gemm_sm90_warpspecialized, gemm_sm90_persistent_cooperative,
gemm_sm90_persistent_pingpong) and the flagship (examples/gemm_bf16) is built with the project's Builder (build
tier, in parallel), checked once against torch.matmul at the problem's tolerance, then timed round-robin with
torch.matmul (cuBLAS) in this one process (harness.timing.time_interleaved: cold L2 before every trial).

Shapes: 4096^3 (= KernelBench level 1 #1, 1_Square_matrix_multiplication_, N = 4096), 2_Standard (M = 2048,
K = 8192, N = 4096) and 8_irregular (M = 8205, K = 2949, N = 5921), all in bf16. The TMA kernels refuse
8_irregular (cudaErrorInvalidValue: a K = 2949 or N = 5921 bf16 row pitch is not a multiple of 16 bytes, which
TMA needs); they do not pad. The row says "refused"; the sm80 and rung-1 kernels refuse it too (whole tiles).

Candidates (`--candidates`): other tile/cluster/schedule choices and scheduler options (swizzle, raster order)
for the flagship, written as copies of examples/gemm_bf16/gemm_bf16.cu with its Sm90Gemm<...> and/or kOptions
line replaced, built and timed beside it; if one beats the flagship at 4096^3, that line is the change to make.

Every ratio comes from BLOCKS interleaved blocks (each a round-robin of cuBLAS and every kernel, one trial of
each per round, cold L2): the published figure is the median of the per-block ratios of medians and its
interval the smallest..largest block ratio (for 5 blocks, the population median lies outside that range with
probability 2 * 0.5^5 = 6 %, so it is a 94 % interval). One slow cuBLAS block cannot make a kernel look faster
than the other blocks say.

    python bench/gemm_rungs.py --out gemm_rungs.json [--only gemm_bf16 gemm_sm90_pipelined] [--shapes 4096^3]
                               [--candidates] [--build-only]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from gpu_session import engine  # noqa: E402

IDIOMS = ROOT / "examples" / "idioms"
RUNGS = {  # name -> kernel, in ladder order
    "gemm_sm80_mma_sync": IDIOMS / "gemm_sm80_mma_sync" / "gemm_sm80_mma_sync.cu",
    "gemm_sm90_tma_wgmma": IDIOMS / "gemm_sm90_tma_wgmma" / "gemm_sm90_tma_wgmma.cu",
    "gemm_sm90_pipelined": IDIOMS / "gemm_sm90_pipelined" / "gemm_sm90_pipelined.cu",
    "gemm_sm90_warpspecialized": IDIOMS / "gemm_sm90_warpspecialized" / "gemm_sm90_warpspecialized.cu",
    "gemm_sm90_persistent_cooperative": IDIOMS / "gemm_sm90_persistent_cooperative" / "gemm_sm90_persistent_cooperative.cu",
    "gemm_sm90_persistent_pingpong": IDIOMS / "gemm_sm90_persistent_pingpong" / "gemm_sm90_persistent_pingpong.cu",
    "gemm_bf16": ROOT / "examples" / "gemm_bf16" / "gemm_bf16.cu",
}
SHAPES = {  # name -> (M, N, K)
    "4096^3": (4096, 4096, 4096),
    "2_Standard": (2048, 4096, 8192),
    "8_irregular": (8205, 5921, 2949),
}
# Flagship candidates: name -> (the Sm90Gemm<...> arguments, or None for the flagship's own; the scheduler's
# LaunchOptions{max_swizzle, raster}, or None for the flagship's own).
_COOP = "cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative"
_PINGPONG = "cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized"
_PERSISTENT = "cutlass::gemm::PersistentScheduler"
_STREAMK = "cutlass::gemm::StreamKScheduler"
_RASTER = "cutegen_sm90_gemm::RasterOrder::"
_GROUPED = "cutegen_sm90_gemm::GroupedTiles"
_DYNAMIC = "cutegen_sm90_gemm::DynamicTiles"
_SK = "cutegen_sm90_gemm::Decomposition::StreamK"
_AUTO_EPI = "cutlass::epilogue::collective::EpilogueTileAuto"
_TRANSPOSED = "cutegen_sm90_gemm::TransposedFrame"
_ROW_MAJOR = "cutegen_sm90_gemm::RowMajorFrame"
_LOCKSTEP = "cutegen_sm90_gemm::Lockstep"
# the LaunchOptions between the raster and even_waves at their defaults, then even_waves
_EVEN = "cutegen_sm90_gemm::Decomposition::Heuristic, cutegen_sm90_gemm::Reduction::Deterministic, true, true"
# SplitK with its splits after it: the options between at their defaults (parameters reused, waves not evened)
_SPLITK = "cutegen_sm90_gemm::Decomposition::SplitK, cutegen_sm90_gemm::Reduction::Deterministic, true, false"
_SPLITK_NONDET = "cutegen_sm90_gemm::Decomposition::SplitK, cutegen_sm90_gemm::Reduction::Nondeterministic, true, false"
CANDIDATES = {
    "coop_128x256_c2x1_sw2": (None, f"2, {_RASTER}Heuristic"),
    "coop_128x256_c2x1_sw4": (None, f"4, {_RASTER}Heuristic"),
    "coop_128x256_c2x1_sw8": (None, f"8, {_RASTER}Heuristic"),
    "coop_128x256_c2x1_sw4_n": (None, f"4, {_RASTER}AlongN"),
    "coop_128x256_c1x2_sw4": (f"Shape<_128, _256, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}", f"4, {_RASTER}Heuristic"),
    "coop_256x128_c2x1_sw4": (f"Shape<_256, _128, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}", f"4, {_RASTER}Heuristic"),
    "coop_256x128_c1x2": (f"Shape<_256, _128, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}", None),
    "coop_128x256_c2x1_streamk": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_STREAMK}", None),
    "coop_128x256_c2x1_streamk_sw4": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_STREAMK}",
                                      f"4, {_RASTER}Heuristic"),
    "pingpong_128x128_c2x1_sw4": (f"Shape<_128, _128, _64>, Shape<_2, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
                                  f"4, {_RASTER}Heuristic"),
    # 2026-12-02: the 4096^3 ranks were within +-1 % of cuBLAS; these try the swizzle that led with the other
    # tile orientation and cluster axis, and a ping-pong whose warpgroups each own a whole 64x256 tile.
    "coop_256x128_c2x1_sw8": (f"Shape<_256, _128, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}", f"8, {_RASTER}Heuristic"),
    "coop_128x256_c1x2_sw8": (f"Shape<_128, _256, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}", f"8, {_RASTER}Heuristic"),
    "pingpong_64x256_c1x2_sw8": (f"Shape<_64, _256, _64>, Shape<_1, _2, _1>, {_PINGPONG}, {_PERSISTENT}",
                                 f"8, {_RASTER}Heuristic"),
    # 2026-12: the stream-K candidates above never ran stream-K -- its Heuristic is data-parallel when the last
    # wave is half full or more (512 tiles = 3.88 waves of 132). These force it (a fixed-order H200 run: 0.93-0.97x
    # cuBLAS), so the last two waves' 248 tiles are shared out by k-iterations (each SM: 248, not 256);
    # and a 2x2 cluster, which multicasts A as well as B (half the L2 -> SM operand traffic of 2x1).
    "sk_128x256_c2x1_sw8": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_STREAMK}",
                            f"8, {_RASTER}Heuristic, {_SK}"),
    "sk_128x256_c2x1_sw8_nondet": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_STREAMK}",
                                   f"8, {_RASTER}Heuristic, {_SK}, cutegen_sm90_gemm::Reduction::Nondeterministic"),
    "sk_128x256_c1x2_sw8": (f"Shape<_128, _256, _64>, Shape<_1, _2, _1>, {_COOP}, {_STREAMK}",
                            f"8, {_RASTER}Heuristic, {_SK}"),
    "sk_256x128_c2x1_sw8": (f"Shape<_256, _128, _64>, Shape<_2, _1, _1>, {_COOP}, {_STREAMK}",
                            f"8, {_RASTER}Heuristic, {_SK}"),
    "coop_128x256_c2x2_sw8": (f"Shape<_128, _256, _64>, Shape<_2, _2, _1>, {_COOP}, {_PERSISTENT}",
                              f"8, {_RASTER}Heuristic"),
    # the raster the Heuristic does not pick for 4096^3 (32 x 16 tiles of 128x256), with the same swizzle
    "coop_128x256_c2x1_sw8_m": (None, f"8, {_RASTER}AlongM"),
    # the epilogue: twice the default subtile (half the store steps), or no smem at all (registers -> global)
    "coop_128x256_c2x1_sw8_epi128x64": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
                                        "Shape<_128, _64>", f"8, {_RASTER}Heuristic"),
    "coop_128x256_c2x1_sw8_nosmem": ("Shape<_128, _256, _64>, Shape<_2, _1, _1>, "
                                     "cutlass::gemm::KernelTmaWarpSpecializedCooperative, "
                                     f"cutlass::epilogue::NoSmemWarpSpecialized, {_PERSISTENT}",
                                     f"8, {_RASTER}Heuristic"),
    # the flagship's schedule until 2026-12-07, spelled out (CUTLASS's epilogue; the flagship now stores per
    # warpgroup, as wgstore4_128x256_c2x1_sw1_even, its twin): the baseline the older figures were measured against
    "coop_128x256_c2x1_sw1": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}",
                              f"1, {_RASTER}Heuristic"),
    # no cluster: no multicast and no cluster barrier (cuBLAS's nvjet kernel pairs its CTAs, 1x2)
    "coop_128x256_c1x1_sw1": (f"Shape<_128, _256, _64>, Shape<_1, _1, _1>, {_COOP}, {_PERSISTENT}",
                              f"1, {_RASTER}Heuristic"),
    # the same, launched as before 2026-12-06: arguments built, checked and initialized on every call (the
    # launcher now relaunches the last call's parameters when its tensors recur): the host time per call
    "coop_128x256_c2x1_sw1_rebuild": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}",
                                      f"1, {_RASTER}Heuristic, cutegen_sm90_gemm::Decomposition::Heuristic, "
                                      "cutegen_sm90_gemm::Reduction::Deterministic, false"),
    # 2026-12-06: small GEMMs. At 512^3 the flagship's 128x256 tile makes 8 tiles for 132 SMs
    # (0.46-0.58x cuBLAS's 64x48 kernel); smaller tiles, or stream-K's split of the k-loop, fill more SMs.
    "pingpong_64x128_c1x1": (f"Shape<_64, _128, _64>, Shape<_1, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
                             f"1, {_RASTER}Heuristic"),
    "pingpong_64x64_c1x1": (f"Shape<_64, _64, _64>, Shape<_1, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
                            f"1, {_RASTER}Heuristic"),
    "ws_64x128_c1x1": ("Shape<_64, _128, _64>, Shape<_1, _1, _1>, cutlass::gemm::KernelTmaWarpSpecialized, "
                       "cutlass::epilogue::TmaWarpSpecialized, void", None),
    "sk_128x128_c1x1": (f"Shape<_128, _128, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}", f"1, {_RASTER}Heuristic"),
    # medium shapes (1280^3-1536^3: cuBLAS picks 224x64 and 192x96 tiles, one wave each): a 128x192 tile makes one
    # wave at 1536^3 (96 tiles) where 128x256 makes 72 and 64x128 makes 288; 128x128 makes 100 at 1280^3
    "coop_128x192_c1x1": (f"Shape<_128, _192, _64>, Shape<_1, _1, _1>, {_COOP}, {_PERSISTENT}", f"1, {_RASTER}Heuristic"),
    "coop_128x192_c2x1": (f"Shape<_128, _192, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}", f"1, {_RASTER}Heuristic"),
    "coop_128x128_c1x1": (f"Shape<_128, _128, _64>, Shape<_1, _1, _1>, {_COOP}, {_PERSISTENT}", f"1, {_RASTER}Heuristic"),
    # 2026-12-06: cuBLAS's tile at 1536^3, 192x96 (128 tiles: one wave on 128 SMs, each 3/4 of a
    # 128x192 tile). A cooperative kernel splits the tile's rows between two warpgroups (96 is no multiple of
    # wgmma's 64 rows); a ping-pong warpgroup owns the whole tile (three m64n96 wgmmas per k-step). Both build
    # here; neither is timed yet (the session had no device time left).
    "pingpong_192x96_c1x1": (f"Shape<_192, _96, _64>, Shape<_1, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
                             f"1, {_RASTER}Heuristic"),
    "pingpong_192x96_c2x1": (f"Shape<_192, _96, _64>, Shape<_2, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
                             f"1, {_RASTER}Heuristic"),
    # 2026-12-06: 4096^3 on the fewest SMs that keep its 4 waves (LaunchOptions::even_waves:
    # 512 tiles on 128 SMs, not 132), the flagship's schedule and 256x128 with A multicast (taken then for cuBLAS's
    # geometry; cuBLAS's kernel name is in its column-major frame, and in torch's its tile is the flagship's 128x256
    # with B multicast over a 2x1 cluster: bench/gemm_sass.py): a power-bound card may clock
    # the busy SMs higher when 4 stay idle the whole call instead of 16 in the last wave.
    "coop_128x256_c2x1_sw1_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}",
                                   f"1, {_RASTER}Heuristic, {_EVEN}"),
    "coop_256x128_c1x2_even": (f"Shape<_256, _128, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}",
                               f"1, {_RASTER}Heuristic, {_EVEN}"),
    # Sustained, every 4096^3 kernel runs at the card's power cap (H100: ~698 W, SM clock ~1380 MHz, nvidia-smi's
    # reason 0x4), so the kernel with the least energy per FLOP wins. A 4x1 cluster multicasts each B tile to four
    # CTAs: a quarter less L2 -> SM traffic than 2x1 (per CTA per k-step 128 + 64 rows, not 128 + 128).
    "coop_128x256_c4x1_even": (f"Shape<_128, _256, _64>, Shape<_4, _1, _1>, {_COOP}, {_PERSISTENT}",
                               f"1, {_RASTER}Heuristic, {_EVEN}"),
    # 2026-12-06: cuBLAS's own frame. cuBLAS is column-major, so it computes a row-major torch.matmul as
    # D^T = B^T A^T, and its nvjet_sm90_tst_256x128_64x4_1x2 is a 256x128 tile of D^T with a 1x2 cluster: in torch's
    # frame the flagship's tile and loads (bench/gemm_sass.py), but its MMAs take our B as their first, MN-major
    # operand (two m64n128 per warpgroup and k-slice, each 64 of our N by 128 of our M) and its epilogue writes D^T
    # column-major. The same CUTLASS schedule in that frame (TransposedFrame), on every SM and on even waves.
    "tcoop_256x128_c1x2_sw1": (f"Shape<_256, _128, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, "
                               f"{_TRANSPOSED}", f"1, {_RASTER}Heuristic"),
    "tcoop_256x128_c1x2_sw1_even": (f"Shape<_256, _128, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, "
                                    f"{_TRANSPOSED}", f"1, {_RASTER}Heuristic, {_EVEN}"),
    # 2026-12-07: the flagship's schedule with every producer issuing each k-step's loads together with
    # every other CTA's (examples/idioms/gemm_sm90_lockstep.cuh): do SMs that ask for a shared tile at the same
    # time get it merged at L2's request coalescer, as cuBLAS's reads are, and does that buy clock at the power cap?
    "lockstep_128x256_c2x1_sw1_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
                                       f"{_AUTO_EPI}, {_ROW_MAJOR}, {_LOCKSTEP}", f"1, {_RASTER}Heuristic, {_EVEN}"),
    "lockstep_128x256_c2x1_sw8_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
                                       f"{_AUTO_EPI}, {_ROW_MAJOR}, {_LOCKSTEP}", f"8, {_RASTER}Heuristic, {_EVEN}"),
    # Every k-step in lockstep merged 4x the flagship's reads (195 MB, cuBLAS 225) and ran 0.65x (H100): the
    # barrier sits on the critical path. Looser ones: up to one or two k-steps apart, together every 8th or 64th
    # k-step, polling every microsecond, or in groups of the 32 CTAs that share A panels; all slower than the
    # flagship (H100, 2026-12-07: best slack 1, 0.962x where the flagship read 0.995x; the header has all).
    **{f"lockstep_{kind}_128x256_c2x1_sw1_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
                                                  f"{_AUTO_EPI}, {_ROW_MAJOR}, {_LOCKSTEP}{alias}",
                                                  f"1, {_RASTER}Heuristic, {_EVEN}")
       for kind, alias in {"slack1": "Slack1", "slack2": "Slack2", "every8": "Every8", "tile": "PerTile",
                           "poll1us": "Poll1us", "row": "Row"}.items()},
    # cuBLAS's scheduler (its listing, bench/gemm_sass.py): after two cluster tiles by launch index, first come first
    # served from a global counter, on every SM. The flagship's schedule with such a scheduler
    # (examples/idioms/gemm_sm90_dynamic_tiles.cuh), on every SM and on even waves.
    "dynamic2_128x256_c2x1": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_DYNAMIC}<2>",
                              f"1, {_RASTER}Heuristic"),
    "dynamic2_128x256_c2x1_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_DYNAMIC}<2>",
                                   f"1, {_RASTER}Heuristic, {_EVEN}"),
    # 2026-12-07: those ran 0.955x the best cuBLAS beside the flagship's 0.985x (H100), merging 67-76 MB of
    # reads (flagship 45, cuBLAS 201). The same order with cuBLAS's plumbing: one drawer per cluster, answers handed
    # on in shared memory, counters that reset themselves (no memset per launch): 113-119 MB merged, and still
    # 1-2 % slower than the flagship in the same processes (H100).
    "dynshared2_128x256_c2x1": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_DYNAMIC}Shared<2>",
                                f"1, {_RASTER}Heuristic"),
    "dynshared2_128x256_c2x1_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_DYNAMIC}Shared<2>",
                                     f"1, {_RASTER}Heuristic, {_EVEN}"),
    # The same with the tile's row and column from precomputed FastDivmods, as CUTLASS's scheduler does (its static
    # SASS has 36 division sequences where CUTLASS's static schedule has none; built, not yet run).
    "dynshared2_fastdiv_128x256_c2x1": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, "
                                        f"{_DYNAMIC}Shared<2, true>", f"1, {_RASTER}Heuristic"),
    # 2026-12-07: at the power cap cuBLAS does 1.024x the flagship's work per clock. The flagship's epilogue
    # (CUTLASS's, two D buffers) waits at each of a tile's 8 subtiles, behind two barriers of both consumer
    # warpgroups, for the previous subtile's TMA store to read its buffer; cuBLAS's (its listing) stores per
    # warpgroup and never waits there. More D buffers (WithStoreStages in the shared header; 4 x 8 KB still leaves
    # the mainloop its 4 stages), and 16-column subtiles (4 KB, cuBLAS's size) with 4 or 8 buffers.
    **{f"store{stages}{'_epi128x16' if narrow else ''}_128x256_c2x1_sw1_even": (
        f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
        f"{'Shape<_128, _16>' if narrow else _AUTO_EPI}, {_ROW_MAJOR}, cutegen_sm90_gemm::BuiltMainloop, "
        f"cutegen_sm90_gemm::StoreStages<{stages}>", f"1, {_RASTER}Heuristic, {_EVEN}")
       for stages, narrow in [(3, False), (4, False), (4, True), (8, True)]},
    # The same stores made per warpgroup, as cuBLAS's (gemm_sm90_warpgroup_epilogue.cuh): each consumer warpgroup
    # writes its 64 rows of a subtile to a buffer half of its own and issues its own TMA store, one barrier of its
    # 128 threads per subtile: 2 or 4 buffers of 128x32 (8 KB), 8 of 128x16 or 2 of 128x64 (both 32 KB in all).
    # H100, graph replay against the best cuBLAS, beside the old epilogue's 0.995x: wgstore4 1.011x [0.990, 1.043]
    # (and 0.997x beside 0.987x in a second call: now the flagship's epilogue), 128x64 1.005x, wgstore2 0.993x,
    # 128x16 0.991x; more buffers alone: store4 0.991x, store8 of 128x16 0.975x.
    **{f"wgstore{stages}{f'_epi128x{cols}' if cols != 32 else ''}_128x256_c2x1_sw1_even": (
        f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, "
        f"{f'Shape<_128, _{cols}>' if cols != 32 else _AUTO_EPI}, {_ROW_MAJOR}, "
        f"cutegen_sm90_gemm::BuiltMainloop, cutegen_sm90_gemm::WarpgroupStores<{stages}>",
        f"1, {_RASTER}Heuristic, {_EVEN}")
       for stages, cols in [(2, 32), (4, 32), (8, 16), (2, 64)]},
    # The flagship's 3072^3 kernel (128x192, six 128x32 subtiles a tile) with the stores per warpgroup, 2 or 3 buffers.
    # H100, 3072^3, graph replay against the best cuBLAS: 0.985x and 0.990x where coop_128x192_c2x1 read 0.975x and
    # the flagship (that kernel on even waves) 0.985x; not yet the flagship's (its GPU tests were not run with it).
    **{f"wgstore{stages}_128x192_c2x1": (
        f"Shape<_128, _192, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        f"cutegen_sm90_gemm::BuiltMainloop, cutegen_sm90_gemm::WarpgroupStores<{stages}>", f"1, {_RASTER}Heuristic")
       for stages in (2, 3)},
    # The flagship's 3072^3 kernel (stores per warpgroup) with every other tile's k-loop walked backwards, as the
    # 128x256 kernel at 4096^3: 384 tiles make 3 waves on 128 SMs. H100, 3 processes x 10 blocks: HBM reads 49.6 MB
    # against 61.6, graph replay 1.004x the best cuBLAS against 1.000x; now the flagship's 128x192 kernel.
    "altk_wgstore3_128x192_c2x1_even": (
        f"Shape<_128, _192, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        "cutegen_sm90_gemm::AlternatingK, cutegen_sm90_gemm::WarpgroupStores<3>", f"1, {_RASTER}Heuristic, {_EVEN}"),
    "wgstore3_128x192_c2x1_even": (
        f"Shape<_128, _192, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        "cutegen_sm90_gemm::BuiltMainloop, cutegen_sm90_gemm::WarpgroupStores<3>", f"1, {_RASTER}Heuristic, {_EVEN}"),
    # 2026-12-07: the flagship's schedule (stores per warpgroup) with every other tile's k-loop walked
    # backwards (gemm_sm90_alternating_k.cuh), so each wave starts on the panels L2 still holds from the last: HBM
    # bytes at the power cap. With swizzle 1 (a wave reads all of B) and 8 (squarer waves), and swizzle 8 alone.
    # H100, 4096^3 per call: HBM reads 127.9 MB (swizzle 8: 121.3) where the forward schedule reads 167.8 (swizzle 8:
    # 133.4; cuBLAS 150.4); at the power cap 680 TFLOP/s at 1410 MHz against 668 at 1380. altk_..._sw1 is now the
    # flagship's 128x256 kernel (1.006x the best cuBLAS by graph replay over 18 processes; docs/results.md).
    **{f"{'altk_' if alternating else ''}wgstore4_128x256_c2x1_sw{swizzle}_even": (
        f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        f"cutegen_sm90_gemm::{'AlternatingK' if alternating else 'BuiltMainloop'}, "
        "cutegen_sm90_gemm::WarpgroupStores<4>", f"{swizzle}, {_RASTER}Heuristic, {_EVEN}")
       for alternating, swizzle in [(True, 1), (True, 8), (False, 8)]},
    # The same with the operand no later wave reads again (A here) loaded evict-first, so L2 keeps B, which every
    # wave reads again, longer (AlternatingKStreamed). H100: 124.0 MB from HBM against the flagship's 127.1, +0.7 %
    # at the power cap, graph replay 1.005x beside the flagship's 1.008x: not adopted.
    "altks_wgstore4_128x256_c2x1_sw1_even": (
        f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        "cutegen_sm90_gemm::AlternatingKStreamed, cutegen_sm90_gemm::WarpgroupStores<4>",
        f"1, {_RASTER}Heuristic, {_EVEN}"),
    # The same with 32-deep k-steps: eight 24 KB stages in the same shared memory instead of four of 48 KB, so a
    # consumer frees a stage twice as often and the producer keeps seven in flight instead of three. H100: 22.8 M warp
    # instructions a call against 16.0 M, graph replay 1.000x beside the flagship's 1.004x: not adopted.
    "altk_wgstore4_128x256x32_c2x1_sw1_even": (
        f"Shape<_128, _256, _32>, Shape<_2, _1, _1>, {_COOP}, {_PERSISTENT}, {_AUTO_EPI}, {_ROW_MAJOR}, "
        "cutegen_sm90_gemm::AlternatingK, cutegen_sm90_gemm::WarpgroupStores<4>", f"1, {_RASTER}Heuristic, {_EVEN}"),
    # bench/gemm_traffic.py, per 4096^3 call: the flagship reads 168 MB from HBM and moves 1205 MB through L2, cuBLAS
    # 150 MB and 1031 MB; the tile order decides how often an operand tile is fetched again
    "coop_128x256_c2x1_sw2_even": (None, f"2, {_RASTER}Heuristic, {_EVEN}"),
    "coop_128x256_c2x1_sw4_even": (None, f"4, {_RASTER}Heuristic, {_EVEN}"),
    "coop_128x256_c2x1_sw8_even": (None, f"8, {_RASTER}Heuristic, {_EVEN}"),
    # Few tiles, a long k-loop (256x512x8192: 8 tiles of 128x128, 128 k-tiles each; the flagship reads 0.60x cuBLAS,
    # which splits k): each tile's k-loop cut into 8 or 16 pieces (64 or 128 work units), summed in the workspace in
    # a fixed order. 2026-12-06 (H100, graph replay): 0.470x and 0.298x the best cuBLAS where the flagship's
    # 64x128 reads 0.609x: each piece waits for the one before it to add its partial tile. cuBLAS runs a 64x64
    # split-K kernel and a separate reduction kernel there.
    "splitk8_128x128_c1x1": (f"Shape<_128, _128, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}",
                             f"1, {_RASTER}Heuristic, {_SPLITK}, 8"),
    "splitk16_128x128_c1x1": (f"Shape<_128, _128, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}",
                              f"1, {_RASTER}Heuristic, {_SPLITK}, 16"),
    # The same pieces added in arrival order (bits may differ between calls), and 128x64 tiles: 16 tiles x 8 pieces
    # make 128 work units, one wave.
    "splitk8_128x128_c1x1_nondet": (f"Shape<_128, _128, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}",
                                    f"1, {_RASTER}Heuristic, {_SPLITK_NONDET}, 8"),
    "splitk8_128x64_c1x1_nondet": (f"Shape<_128, _64, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}",
                                   f"1, {_RASTER}Heuristic, {_SPLITK_NONDET}, 8"),
    # The same launched as before 2026-12-06: Params rebuilt on every call (a workspace kernel's are now
    # kept and only its workspace zeroed again): the host time per call of a split kernel called back to back
    "splitk8_128x64_c1x1_nondet_rebuild": (f"Shape<_128, _64, _64>, Shape<_1, _1, _1>, {_COOP}, {_STREAMK}",
                                           f"1, {_RASTER}Heuristic, cutegen_sm90_gemm::Decomposition::SplitK, "
                                           "cutegen_sm90_gemm::Reduction::Nondeterministic, false, false, 8"),
    # 2026-12-06: the order of our own (examples/idioms/gemm_sm90_grouped_tiles.cuh), in bands of 8 cluster
    # rows (a 4096^3 wave on 128 SMs is an 8x8 block of clusters): each run of consecutive clusters a compact block
    # of 2x4, 4x2 or 4x4 clusters; 8x8x8 walks the block column by column, as CUTLASS's swizzle 8 does (the control).
    "grouped_8x8x8_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_GROUPED}<8, 8, 8>",
                           f"1, {_RASTER}Heuristic, {_EVEN}"),
    "grouped_8x4x2_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_GROUPED}<8, 4, 2>",
                           f"1, {_RASTER}Heuristic, {_EVEN}"),
    "grouped_8x2x4_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_GROUPED}<8, 2, 4>",
                           f"1, {_RASTER}Heuristic, {_EVEN}"),
    "grouped_8x4x4_even": (f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, {_GROUPED}<8, 4, 4>",
                           f"1, {_RASTER}Heuristic, {_EVEN}"),
}
BLOCKS = 5  # interleaved blocks: a ratio's interval is the min..max of its per-block ratios (see time_shape)
TOLERANCE = 1e-2  # examples/gemm_bf16/gemm_bf16.py's CUTEGEN_ATOL = CUTEGEN_RTOL: bf16 output


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=list(RUNGS), choices=list(RUNGS))
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--candidates", action="store_true", help="also build and time the flagship candidates")
    ap.add_argument("--build-only", action="store_true", help="build (into $CUTEGEN_BENCH_STATE) and stop: a later "
                    "run in the same device call then finds every build cached")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    kernels = {n: RUNGS[n] for n in args.only}
    if args.candidates:  # a fixed folder: the build cache's key covers the path, so a rerun finds its builds
        folder = Path(tempfile.gettempdir()) / "cutegen-gemm-candidates"
        folder.mkdir(exist_ok=True)
        kernels.update(write_candidates(folder))
    libraries, builds = build_all(kernels)
    if args.build_only:
        return
    rows = [time_shape(shape, SHAPES[shape], libraries) for shape in args.shapes]
    report = {"date": time.strftime("%Y-%m-%d"), "gpu": _gpu_name(), "builds": builds, "shapes": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


CANDIDATE = """\
// {name}: a flagship candidate written by bench/gemm_rungs.py -- one schedule, launched by the shared launcher
#include "{header}"

namespace candidate_impl {{
using namespace cute;
using Gemm = cutegen_sm90_gemm::Sm90Gemm<{arguments}>::Gemm;
constexpr cutegen_sm90_gemm::LaunchOptions kOptions{{{options}}};
}}  // namespace candidate_impl

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {{
  return cutegen_sm90_gemm::launch<candidate_impl::Gemm>(inputs, num_inputs, outputs, num_outputs, stream,
                                                          candidate_impl::kOptions);
}}
"""


def flagship_schedule() -> str:
    """The template arguments of the flagship's large kernel (its `using Gemm = ...Sm90Gemm<...>::Gemm;`)."""
    found = re.search(r"using Gemm = cutegen_sm90_gemm::Sm90Gemm<(.*?)>::Gemm;", RUNGS["gemm_bf16"].read_text(), re.S)
    assert found, "the flagship's `using Gemm` line moved"
    return " ".join(found.group(1).split())


def write_candidates(folder: Path) -> dict[str, Path]:
    """One kernel per candidate, always that kernel (no dispatch by shape, unlike the flagship): its schedule, or
    the flagship's large one, with its launch options; the shared header is included by absolute path."""
    header = (IDIOMS / "gemm_sm90_common.cuh").resolve()
    out = {}
    for name, (arguments, options) in CANDIDATES.items():
        path = folder / f"{name}.cu"
        path.write_text(CANDIDATE.format(name=name, header=header, arguments=arguments or flagship_schedule(),
                                         options=options or ""))
        out[name] = path
    return out


def build(kernels: dict[str, Path], workers: int | None = None) -> dict:
    """Every kernel through the build tier, `workers` at a time (default: all at once), each reported on a line:
    name -> (the build's outcome, its summary for the JSON report)."""
    from cutegen.compile import Tier

    builder, worker, _ = engine()
    worker.stop()  # everything runs in this process: the kernels are timed side by side with cuBLAS
    with ThreadPoolExecutor(workers or len(kernels)) as pool:
        outcomes = dict(zip(kernels, pool.map(lambda p: builder.run(Tier.BUILD, p), kernels.values())))
    return {name: (outcome, _reported(name, outcome)) for name, outcome in outcomes.items()}


def _reported(name: str, outcome) -> dict:
    regs = {r.name: r.registers for r in outcome.resources}
    summary = {"ok": outcome.ok, "seconds": round(outcome.seconds, 1), "cached": outcome.cached, "registers": regs}
    if outcome.ok:
        print(f"built {name:<34} {outcome.seconds:6.1f} s  registers {regs}", flush=True)
    else:
        summary["error"] = outcome.errors[0].format() if outcome.errors else outcome.raw_log[-2000:]
        print(f"built {name:<34} FAILED: {summary['error']}", flush=True)
    return summary


def build_all(kernels: dict[str, Path]) -> tuple[dict, dict]:
    from cutegen.harness.abi import KernelLibrary

    built = build(kernels)
    libraries = {name: KernelLibrary(outcome.artifact) for name, (outcome, _) in built.items() if outcome.ok}
    return libraries, {name: summary for name, (_, summary) in built.items()}


def time_shape(shape: str, mnk: tuple[int, int, int], libraries: dict) -> dict:
    import torch

    from cutegen.harness.compare import compare
    from cutegen.harness.timing import time_interleaved

    m, n, k = mnk
    torch.manual_seed(0)
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
    ref = torch.matmul(a, b)
    stream = torch.cuda.current_stream()
    fns = {"cuBLAS": lambda: torch.matmul(a, b)}
    status = {}
    for name, lib in libraries.items():
        out = torch.full_like(ref, float("nan"))
        rc = lib([a, b], [out], stream)
        torch.cuda.synchronize()
        if rc != 0:
            status[name] = f"refused (cudaError {rc})"
            continue
        mismatch = compare(out, ref, TOLERANCE, TOLERANCE)
        if mismatch is not None:
            status[name] = f"WRONG: {mismatch.message}"
            continue
        status[name] = "pass"
        fns[name] = (lambda lib=lib, out=out: lib([a, b], [out], stream))
    blocks = [time_interleaved(fns, min_trials=20, max_trials=40, budget_s=0.5) for _ in range(BLOCKS)]
    flops = 2 * m * n * k
    row = {"shape": shape, "M": m, "N": n, "K": k, "blocks": BLOCKS, "kernels": []}
    print(f"\n{shape}: M={m} N={n} K={k}  ({BLOCKS} interleaved blocks; x cuBLAS = median of the per-block "
          "ratios, [min, max] over blocks)", flush=True)
    for name in ["cuBLAS", *libraries]:
        entry = {"name": name, "status": status.get(name, "pass")}
        if name in fns:
            medians = [b[name].median_ms for b in blocks]
            ratios = sorted(b["cuBLAS"].median_ms / b[name].median_ms for b in blocks)
            median_ms = statistics.median(medians)
            entry.update(median_ms=median_ms, block_medians_ms=medians, spread=statistics.median(b[name].spread for b in blocks),
                         trials=sum(b[name].trials for b in blocks), tflop_per_s=flops / (median_ms / 1e3) / 1e12,
                         vs_cublas=statistics.median(ratios), vs_cublas_interval=[ratios[0], ratios[-1]])
            print(f"  {name:<34} {median_ms:7.3f} ms  {entry['tflop_per_s']:6.1f} TFLOP/s  "
                  f"{entry['vs_cublas']:5.3f}x cuBLAS [{ratios[0]:.3f}, {ratios[-1]:.3f}]", flush=True)
        else:
            print(f"  {name:<34} {entry['status']}", flush=True)
        row["kernels"].append(entry)
    return row


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name()


if __name__ == "__main__":
    main()
