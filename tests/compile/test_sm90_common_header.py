"""examples/idioms/gemm_sm90_common.cuh makes CUTLASS a release build (NDEBUG) and silences two CUTLASS-internal
warnings for its own text only: the file that includes it keeps its own asserts. Read with the preprocessor alone
(seconds; a check of an includer takes minutes): NDEBUG after the header, and the asserts the text still calls."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

from cutegen.toolchain import ABI_INCLUDE
from tests.support.paths import ROOT

HEADER = ROOT / "examples" / "idioms" / "gemm_sm90_common.cuh"
# HEADER and the headers it includes beside it (the grouped and dynamic tile orders, the lockstep mainloop)
HEADERS = sorted(HEADER.parent.glob("gemm_sm90_*.cuh"))
INCLUDER = f"""#include "{HEADER}"
__device__ void mine(int x) {{ assert(x > 0); }}
#if defined(NDEBUG) != defined(EXPECT_NDEBUG)
#error "NDEBUG after gemm_sm90_common.cuh is not what the includer had"
#endif
"""
_ASSERT_CALL = re.compile(r":\s*__assert_fail\s*\(")  # an assert that stayed in: `cond ? void(0) : __assert_fail(`


def _nvcc(toolchain, *arguments: str, timeout: int) -> None:
    """nvcc with the header's include paths and the toolchain's target; fails the test with nvcc's words."""
    run = subprocess.run([toolchain.nvcc, "-std=c++17", *toolchain.gencode, f"-I{toolchain.cutlass_include}",
                          f"-I{ABI_INCLUDE}", *arguments], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-2000:]


def _preprocessed(toolchain, tmp_path: Path, *defines: str) -> str:
    source = tmp_path / "includer.cu"
    source.write_text(INCLUDER)
    out = tmp_path / "includer.ii"
    _nvcc(toolchain, *defines, "-E", str(source), "-o", str(out), timeout=300)
    return out.read_text(errors="replace")


def test_the_includer_keeps_its_asserts_and_cutlass_loses_its_own(toolchain, tmp_path):
    text = _preprocessed(toolchain, tmp_path)
    calls = [m.start() for m in _ASSERT_CALL.finditer(text)]
    assert len(calls) == 1, f"{len(calls)} asserts stayed in; only the includer's own should"
    assert text.rfind("void mine(") < calls[0]  # and it is the includer's


def test_an_includer_built_with_ndebug_keeps_it(toolchain, tmp_path):
    text = _preprocessed(toolchain, tmp_path, "-DNDEBUG", "-DEXPECT_NDEBUG")
    assert not _ASSERT_CALL.search(text)


# What every host program starts with: the header, printf/atoi, and the flagship's large kernel (128x256, cluster 2x1).
HOST_PRELUDE = f"""#include "{HEADER}"
#include <cstdio>
#include <cstdlib>
using namespace cute;
using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using CoopEpilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
using Flagship = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _256, _64>, Shape<_2, _1, _1>, Coop, CoopEpilogue,
                                             cutlass::gemm::PersistentScheduler>::Gemm;
"""


EVEN_WAVES = HOST_PRELUDE + """\
int main(int argc, char** argv) {  // SMs, max active clusters, M, N, max swizzle -> the grid's hardware
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = atoi(argv[1]);
  hw.max_active_clusters = atoi(argv[2]);
  hw = cutegen_sm90_gemm::even_wave_hardware<Flagship>(hw, atoll(argv[3]), atoll(argv[4]), atoi(argv[5]));
  printf("%d %d", hw.sm_count, hw.max_active_clusters);
}
"""


def _host_program(toolchain, build_state: Path, name: str, source: str) -> Path:
    """`source` built into a host program, kept in the shared test build cache under a key of its text, the
    headers' and the toolchain's (the compile takes ~20 s: a warm run reuses it)."""
    headers = "|".join(header.read_text() for header in HEADERS)
    key = hashlib.sha256(f"{source}|{headers}|{toolchain.fingerprint}".encode()).hexdigest()[:16]
    program = build_state / "host-programs" / f"{name}-{key}"
    if program.exists():
        return program
    program.parent.mkdir(parents=True, exist_ok=True)
    text = program.parent / f"{name}-{key}.cu"
    text.write_text(source)
    partial = program.with_suffix(f".{os.getpid()}")  # renamed into place whole: a parallel run never sees half
    _nvcc(toolchain, str(text), "-o", str(partial), timeout=600)
    partial.replace(program)
    return program


def test_even_waves_keep_the_waves_on_the_fewest_whole_clusters(toolchain, build_state):
    """The flagship's 128x256 kernel (cluster 2x1) on 132 SMs, 66 clusters: host code only, no GPU."""
    program = _host_program(toolchain, build_state, "even_waves", EVEN_WAVES)

    def hardware(m: int, n: int, swizzle: int = 1) -> str:
        return subprocess.run([str(program), "132", "66", str(m), str(n), str(swizzle)], capture_output=True,
                              text=True, check=True).stdout

    assert hardware(4096, 4096) == "128 64"  # 512 tiles: 4 waves on 132 SMs or on 128
    assert hardware(2816, 3072) == "132 66"  # 264 tiles: 2 full waves, every SM kept
    # 33 x 16 tiles, counted as the scheduler walks them (whole 2x1 clusters): 34 x 16 = 544, 5 waves, 109 -> 110 SMs
    assert hardware(4224, 4096) == "110 55"
    # swizzle 8 pads the 33 rows of tiles to 48 (whole 8 x 2 groups): 768 tiles, 6 waves on 128 SMs (110 would make 7)
    assert hardware(4224, 4096, swizzle=8) == "128 64"
    assert hardware(4096, 4096, swizzle=8) == "128 64"


CHOICE = HOST_PRELUDE + """\
using Small = cutegen_sm90_gemm::Sm90Gemm<Shape<_64, _128, _64>, Shape<_1, _1, _1>,
    cutlass::gemm::KernelTmaWarpSpecialized, cutlass::epilogue::TmaWarpSpecialized>::Gemm;
using Split = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _64, _64>, Shape<_1, _1, _1>, Coop, CoopEpilogue,
                                          cutlass::gemm::StreamKScheduler>::Gemm;
int main(int argc, char** argv) {  // SMs, M, N, K -> the index of the cheapest of the flagship's kinds of choice
  cutegen_sm90_gemm::LaunchKey key;
  key.M = atoll(argv[2]), key.N = atoll(argv[3]), key.K = atoll(argv[4]);
  printf("%zu", cutegen_sm90_gemm::cheapest_choice<Flagship, Small, cutegen_sm90_gemm::SplitK<Split, 8, 4900>>(
      key, atoi(argv[1]), {1.00, 0.60, 0.60}));
}
"""


def test_a_split_k_choice_runs_only_for_few_tiles_and_a_long_k_loop(toolchain, build_state):
    """launch_cheapest's cost of a SplitK choice (the flagship's 128x64 in 8 pieces) against a 64x128 tile and the
    128x256 one, on 132 SMs: host code only, no GPU."""
    program = _host_program(toolchain, build_state, "split_choice", CHOICE)

    def cheapest(m: int, n: int, k: int, sms: int = 132) -> str:
        picked = subprocess.run([str(program), str(sms), str(m), str(n), str(k)], capture_output=True, text=True,
                                check=True).stdout
        return ["128x256", "64x128", "split"][int(picked)]

    assert cheapest(256, 512, 8192) == "split"  # 16 tiles x 8 pieces = 128 <= 132 SMs, 1024 k each
    assert cheapest(256, 512, 16384) == "split"
    assert cheapest(256, 512, 2048) == "64x128"  # 256 k a piece does not pay for adding the pieces
    assert cheapest(512, 512, 8192) == "64x128"  # 32 tiles x 8 = 256 pieces: more than the SMs
    assert cheapest(256, 512, 8192, sms=64) == "64x128"  # on a smaller card the pieces would queue
    assert cheapest(4096, 4096, 4096) == "128x256"


GROUPED_ORDER = HOST_PRELUDE + """\
int main(int argc, char** argv) {  // rows, cols, band, chunk, group -> each cluster tile of the order, a line each
  const int rows = atoi(argv[1]), cols = atoi(argv[2]);
  for (uint32_t i = 0; i < uint32_t(rows * cols); ++i) {  // the function's own index type
    const auto tile = cutegen_sm90_gemm::grouped_cluster_tile(i, rows, cols, atoi(argv[3]), atoi(argv[4]),
                                                              atoi(argv[5]));
    printf("%d %d\\n", tile.row, tile.col);
  }
}
"""


def test_the_grouped_tile_order_visits_every_tile_once_in_compact_runs(toolchain, build_state):
    """The bench candidates' tile order (gemm_sm90_grouped_tiles.cuh) on the host: a bijection onto any grid,
    ragged edges included, and at 4096^3 (16 x 16 clusters of 2x1 128x256 tiles) each run of 8 consecutive clusters
    a 2 x 4 block, each wave of 64 an 8 x 8 one."""
    program = _host_program(toolchain, build_state, "grouped_order", GROUPED_ORDER)

    def order(rows: int, cols: int, band: int, chunk: int, group: int) -> list[tuple[int, int]]:
        out = subprocess.run([str(program), *map(str, (rows, cols, band, chunk, group))], capture_output=True,
                             text=True, check=True).stdout
        return [tuple(map(int, line.split())) for line in out.splitlines()]

    for rows, cols, band, chunk, group in [(16, 16, 8, 4, 2), (17, 13, 8, 4, 2), (5, 3, 8, 4, 4), (9, 30, 4, 3, 3),
                                           (1, 7, 8, 2, 1), (33, 16, 8, 8, 8)]:
        tiles = order(rows, cols, band, chunk, group)
        assert sorted(tiles) == [(r, c) for r in range(rows) for c in range(cols)], (rows, cols, band, chunk, group)

    def extent(tiles: list[tuple[int, int]]) -> tuple[int, int]:
        return len({r for r, _ in tiles}), len({c for _, c in tiles})

    tiles = order(16, 16, 8, 4, 2)
    assert all(extent(tiles[i:i + 8]) == (2, 4) for i in range(0, 256, 8))
    assert all(extent(tiles[i:i + 64]) == (8, 8) for i in range(0, 256, 64))
    # 8, 8, 8 is CUTLASS's swizzle 8 along N: each run of 8 clusters one column of the 8 x 8 block
    assert extent(order(16, 16, 8, 8, 8)[:8]) == (8, 1)


FRAMES = HOST_PRELUDE + """\
using Transposed = cutegen_sm90_gemm::Sm90Gemm<Shape<_256, _128, _64>, Shape<_1, _2, _1>, Coop, CoopEpilogue,
    cutlass::gemm::PersistentScheduler, cutlass::epilogue::collective::EpilogueTileAuto,
    cutegen_sm90_gemm::TransposedFrame>::Gemm;
const char* name(const void* p, const cutegen_sm90_gemm::LaunchKey& key) { return p == key.A ? "A" : "B"; }
template <class Gemm>
void show(const cutegen_sm90_gemm::LaunchKey& key) {  // CUTLASS's problem, operands and strides, one line
  const auto args = cutegen_sm90_gemm::make_arguments<Gemm>(key);
  const auto& s = args.problem_shape;
  const auto& a = args.mainloop.dA;
  const auto& b = args.mainloop.dB;
  const auto& d = args.epilogue.dD;
  printf("%d %d %d %s(%lld,%lld) %s(%lld,%lld) D(%lld,%lld) tiles %lld\\n", int(get<0>(s)), int(get<1>(s)),
         int(get<2>(s)), name(args.mainloop.ptr_A, key), (long long)get<0>(a), (long long)get<1>(a),
         name(args.mainloop.ptr_B, key), (long long)get<0>(b), (long long)get<1>(b), (long long)get<0>(d),
         (long long)get<1>(d), (long long)cutegen_sm90_gemm::output_tiles<Gemm>(key));
}
int main(int argc, char** argv) {  // M, N, K -> the row-major frame's line, then the transposed frame's
  static char a, b, d;
  cutegen_sm90_gemm::LaunchKey key;
  key.M = atoll(argv[1]), key.N = atoll(argv[2]), key.K = atoll(argv[3]);
  key.A = &a, key.B = &b, key.D = &d;
  show<Flagship>(key);
  show<Transposed>(key);
}
"""


def test_the_transposed_frame_computes_d_transposed_from_the_same_memory(toolchain, build_state):
    """TransposedFrame (cuBLAS's: D^T = B^T A^T) hands CUTLASS the caller's row-major tensors as column-major
    operands, swapped: its M is the caller's N, its A the caller's B (pitch N between its k columns), its B the
    caller's A (pitch K), D^T column-major with pitch N; tiles are counted in its frame. Host code only, no GPU."""
    program = _host_program(toolchain, build_state, "frames", FRAMES)
    rows, transposed = subprocess.run([str(program), "512", "128", "64"], capture_output=True, text=True,
                                      check=True).stdout.splitlines()
    # A (512,64) row-major: pitch 64 between rows; B seen as (N,K) = (128,64): contiguous in N, pitch 128
    assert rows == "512 128 64 A(64,1) B(1,128) D(128,1) tiles 4"  # 4 x 1 tiles of 128x256
    # B^T (128,64) contiguous in N, pitch 128; A^T seen as (N',K) = (512,64): pitch 64; D^T (128,512), pitch 128
    assert transposed == "128 512 64 B(1,128) A(64,1) D(1,128) tiles 4"  # 1 x 4 tiles of 256x128


EPILOGUES = HOST_PRELUDE + """\
template <class EpilogueAs>
using With = cutegen_sm90_gemm::Sm90Gemm<Shape<_128, _256, _64>, Shape<_2, _1, _1>, Coop, CoopEpilogue,
    cutlass::gemm::PersistentScheduler, cutlass::epilogue::collective::EpilogueTileAuto,
    cutegen_sm90_gemm::RowMajorFrame, cutegen_sm90_gemm::BuiltMainloop, EpilogueAs>;
template <class G>
void show(const char* name) {  // mainloop stages, the kernel's shared memory, D's buffers
  printf("%s %d %d %d\\n", name, int(G::Mainloop::DispatchPolicy::Stages),
         int(sizeof(typename G::Gemm::GemmKernel::SharedStorage)), int(G::Epilogue::DispatchPolicy::StagesD));
}
int main() {
  show<With<cutegen_sm90_gemm::BuiltEpilogue>>("built");
  show<With<cutegen_sm90_gemm::StoreStages<4>>>("stores4");
  show<With<cutegen_sm90_gemm::WarpgroupStores<2>>>("warpgroup2");
  show<With<cutegen_sm90_gemm::WarpgroupStores<4>>>("warpgroup4");
  using Half = typename With<cutegen_sm90_gemm::WarpgroupStores<4>>::Epilogue::HalfStore;
  printf("box %d %d\\n", int(size<0>(typename Half::Tiler_MN{})), int(size<1>(typename Half::Tiler_MN{})));
}
"""


def test_epilogues_of_our_own_keep_the_mainloops_four_stages(toolchain, build_state):
    """The bench's epilogue candidates (gemm_sm90_warpgroup_epilogue.cuh) on the host: four 8 KB buffers for D
    still leave the 128x256 mainloop its four 48 KB stages within the SM's 227 KB, and the per-warpgroup epilogue
    takes exactly the buffers of the one it wraps, each stored in 64-row halves (one per consumer warpgroup)."""
    program = _host_program(toolchain, build_state, "epilogues", EPILOGUES)
    lines = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.splitlines()
    shown = {name: tuple(map(int, rest)) for name, *rest in (line.split() for line in lines)}
    assert shown["built"] == (4, 214016, 2)  # cuBLAS's kernel launches with ~214 KB as well (gemm_traffic.py)
    assert shown["stores4"][0] == 4 and shown["stores4"][1] <= 227 * 1024 and shown["stores4"][2] == 4
    assert shown["warpgroup2"] == shown["built"]
    assert shown["warpgroup4"] == shown["stores4"]
    assert shown["box"] == (64, 32)
