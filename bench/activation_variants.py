"""GPU: variants of the activation examples, timed round-robin against torch.compile, eager and a plain
device-to-device copy of the same bytes, all in one process. This is how the examples' shape was chosen; it
stays here so that the choice can be re-checked on another card. Measured on the H200 (2026-11-29), with the
examples at 256 threads: 512 threads was the fastest shape for all six (96-98 % of the copy bandwidth, against
95-96 %); 8 accesses per thread changed nothing; streaming loads (ld.global.nc.L1::no_allocate.L2::256B) cost
6 % and evict-first stores 1 %. The examples now use 512 threads.

Each variant is the example's source with a few constants or copy atoms replaced (VARIANTS below), built with
the build tier, checked against the reference once, then timed.

    python bench/activation_variants.py --only hardsigmoid gelu_tanh --out variants.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

from gpu_session import engine  # noqa: E402

ACTIVATIONS = ["softsign", "swish", "gelu_tanh", "selu", "hardsigmoid", "softplus"]

# Streaming copy atoms: the same 128-bit copy as UniversalCopy<uint128_t>, with cache hints. Loads:
# ld.global.nc (read-only path), no L1 allocation, and a 256-byte L2 prefetch hint; stores: st.global.cs
# (evict-first: the output is never read again by this kernel).
STREAMING_ATOMS = r'''
namespace cute {
struct StreamingLoad128 {
  using SRegisters = uint128_t[1];
  using DRegisters = uint128_t[1];
  CUTE_DEVICE static void copy(uint128_t const& src, uint128_t& dst) {
    uint32_t* d = reinterpret_cast<uint32_t*>(&dst);
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "l"(&src));
  }
};
struct StreamingStore128 {
  using SRegisters = uint128_t[1];
  using DRegisters = uint128_t[1];
  CUTE_DEVICE static void copy(uint128_t const& src, uint128_t& dst) {
    const uint32_t* s = reinterpret_cast<const uint32_t*>(&src);
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(&dst), "r"(s[0]), "r"(s[1]), "r"(s[2]), "r"(s[3]) : "memory");
  }
};
template <> struct Copy_Traits<StreamingLoad128> : Copy_Traits<UniversalCopy<uint128_t>> {};
template <> struct Copy_Traits<StreamingStore128> : Copy_Traits<UniversalCopy<uint128_t>> {};
}  // namespace cute
'''

LOAD = "copy(tiled_copy, tXgX, frag);"
STORE = "copy(tiled_copy, frag, tYgY);"
STREAM_LOAD = "copy(Copy_Atom<StreamingLoad128, float>{}, tXgX, frag);"
STREAM_STORE = "copy(Copy_Atom<StreamingStore128, float>{}, frag, tYgY);"


def _streaming(src: str, loads: bool = True, stores: bool = True) -> str:
    src = src.replace("#include <cute/tensor.hpp>\n", "#include <cute/tensor.hpp>\n" + STREAMING_ATOMS, 1)
    if loads:
        src = src.replace(LOAD, STREAM_LOAD)
    if stores:
        src = src.replace(STORE, STREAM_STORE)
    return src


KERNEL_HEAD = """__global__ void __launch_bounds__(kThreads)
elementwise_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {"""
TILE_HEAD = """__device__ __forceinline__ void
process_tile(const float* __restrict__ x, float* __restrict__ y, int64_t n, int64_t tile) {"""
GRID_STRIDE_KERNEL = """template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
elementwise_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t tiles = (n + kTileElems - 1) / kTileElems;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) process_tile<kVectorized>(x, y, n, tile);
}

inline bool is_f32"""
GRID = """  int sms = 132;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int64_t grid = tiles < int64_t(sms) * (2048 / kThreads) ? tiles : int64_t(sms) * (2048 / kThreads);
  const bool aligned ="""


def _grid_stride(src: str) -> str:
    """One wave of CTAs that loop over the tiles: no CTA launch/retire gaps between tiles."""
    src = src.replace(KERNEL_HEAD, TILE_HEAD).replace("  const int64_t tile = blockIdx.x;\n", "")
    src = src.replace("\n}\n\ninline bool is_f32", "\n}\n\n" + GRID_STRIDE_KERNEL, 1)
    src = src.replace("  const bool aligned =", GRID, 1)
    return src.replace("<<<unsigned(tiles), kThreads, 0, stream>>>", "<<<unsigned(grid), kThreads, 0, stream>>>")


def _const(name: str, old: int, new: int):
    return lambda src: src.replace(f"{name} = {old};", f"{name} = {new};")


VARIANTS = {
    "as-is": lambda s: s,
    "threads256": _const("kThreads", 512, 256),
    "threads1024": _const("kThreads", 512, 1024),
    "threads128": _const("kThreads", 512, 128),
    "vec8": _const("kVecPerThread", 4, 8),
    "vec2": _const("kVecPerThread", 4, 2),
    "vec1": _const("kVecPerThread", 4, 1),
    "threads128-vec1": lambda s: _const("kThreads", 512, 128)(_const("kVecPerThread", 4, 1)(s)),
    "grid-stride": _grid_stride,
    "grid-stride-threads256": lambda s: _grid_stride(_const("kThreads", 512, 256)(s)),
    "stream-load": lambda s: _streaming(s, stores=False),
    "stream-store": lambda s: _streaming(s, loads=False),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=ACTIVATIONS)
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    builder, worker, _ = engine()
    worker.stop()  # everything runs in this process: the variants are timed side by side
    work = Path(tempfile.mkdtemp())
    sources = {(a, v): _write_variant(work, a, v) for a in args.only for v in args.variants}
    with ThreadPoolExecutor(16) as pool:
        from cutegen.compile import Tier
        builds = dict(zip(sources, pool.map(lambda p: builder.run(Tier.BUILD, p), sources.values())))
    rows = []
    for activation in args.only:
        rows += _time_activation(activation, {v: builds[(activation, v)] for v in args.variants})
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "date": time.strftime("%Y-%m-%d")}, indent=1))


def _write_variant(work: Path, activation: str, variant: str) -> Path:
    folder = work / f"{activation}-{variant}"
    folder.mkdir()
    src = (ROOT / "examples" / activation / f"{activation}.cu").read_text()
    changed = VARIANTS[variant](src)
    if variant != "as-is" and changed == src:
        raise SystemExit(f"variant {variant} changed nothing in {activation}.cu: the example's shape moved")
    (folder / f"{activation}.cu").write_text(changed)
    shutil.copy(ROOT / "examples" / activation / f"{activation}.py", folder / f"{activation}.py")
    return folder / f"{activation}.cu"


def _time_activation(activation: str, builds: dict) -> list[dict]:
    import torch

    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.compare import compare
    from cutegen.harness.problem import load_problem
    from cutegen.harness.timing import throughput, time_interleaved

    problem = load_problem(ROOT / "examples" / activation / f"{activation}.py")
    model = problem.make_model().cuda().eval()
    torch.manual_seed(0)
    x = torch.randn(*problem.make_inputs()[0].shape, device="cuda")  # randn: both signs, unlike rand
    with torch.no_grad():
        ref = model(x)
        compiled = torch.compile(model)
        compiled(x)
    stream = torch.cuda.current_stream()
    out = torch.empty_like(ref)
    copy_dst = torch.empty_like(ref)
    fns = {"copy": lambda: copy_dst.copy_(x), "torch.compile": lambda: compiled(x), "eager": lambda: model(x)}
    for variant, build in builds.items():
        if not build.ok:
            print(f"{activation:<12} {variant:<18} build failed: {build.errors[0].format() if build.errors else ''}")
            continue
        lib = KernelLibrary(build.artifact)
        out.fill_(float("nan"))
        assert lib([x], [out], stream) == 0
        mismatch = compare(out, ref, *problem.tolerance("float32"))
        if mismatch is not None:
            print(f"{activation:<12} {variant:<18} WRONG: {mismatch.message}")
            continue
        fns[variant] = (lambda lib=lib: lib([x], [out], stream))
    with torch.no_grad():
        timings = time_interleaved(fns)
    nbytes = 2 * x.numel() * x.element_size()
    base = timings["torch.compile"].median_ms
    rows = []
    for name, t in timings.items():
        tb_per_s = throughput(t.median_ms / 1e3, nbytes, None, "float32")["gb_per_s"] / 1e3
        rows.append({"activation": activation, "variant": name, "median_ms": t.median_ms, "spread": t.spread,
                     "tb_per_s": tb_per_s, "vs_compile": base / t.median_ms,
                     "vs_copy": timings["copy"].median_ms / t.median_ms})
        r = rows[-1]
        print(f"{activation:<12} {name:<18} {t.median_ms:7.3f} ms ±{t.spread:5.1%}  {r['tb_per_s']:5.2f} TB/s  "
              f"{r['vs_copy']:5.1%} of copy  vs torch.compile {r['vs_compile']:.3f}×", flush=True)
    return rows


if __name__ == "__main__":
    main()
