"""GPU: the Hopper bf16 GEMM ladder against cuBLAS. Every rung (examples/idioms/gemm_sm80_mma_sync,
gemm_sm90_tma_wgmma, gemm_sm90_pipelined, gemm_sm90_warpspecialized, gemm_sm90_persistent_cooperative,
gemm_sm90_persistent_pingpong) and the flagship (examples/gemm_bf16) is built with the project's Builder (build
tier, in parallel), checked once against torch.matmul at the problem's tolerance, then timed round-robin with
torch.matmul (cuBLAS) in this one process (harness.timing.time_interleaved: cold L2 before every trial).

Shapes: 4096^3 (= KernelBench level 1 #1, 1_Square_matrix_multiplication_, N = 4096), 2_Standard (M = 2048,
K = 8192, N = 4096) and 8_irregular (M = 8205, K = 2949, N = 5921), all in bf16. The TMA kernels refuse
8_irregular (cudaErrorInvalidValue: a K = 2949 or N = 5921 bf16 row pitch is not a multiple of 16 bytes, which
TMA needs); they do not pad. The row says "refused"; the sm80 and rung-1 kernels refuse it too (whole tiles).

Candidates (`--candidates`): other tile/cluster/schedule choices for the flagship, written as copies of
examples/gemm_bf16/gemm_bf16.cu with its Sm90Gemm<...> line replaced, built and timed beside it; if one beats
the flagship at 4096^3, that line is the one-line change to make.

    python bench/gemm_rungs.py --out gemm_rungs.json [--only gemm_bf16 gemm_sm90_pipelined] [--shapes 4096^3]
                               [--candidates]
"""

from __future__ import annotations

import argparse
import json
import re
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
# Flagship candidates: name -> the Sm90Gemm<...> arguments (tile, cluster, mainloop, epilogue, scheduler).
_COOP = "cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative"
_PINGPONG = "cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized"
_PERSISTENT = "cutlass::gemm::PersistentScheduler"
CANDIDATES = {
    "coop_256x128_c1x2": f"Shape<_256, _128, _64>, Shape<_1, _2, _1>, {_COOP}, {_PERSISTENT}",
    "coop_128x256_c1x1": f"Shape<_128, _256, _64>, Shape<_1, _1, _1>, {_COOP}, {_PERSISTENT}",
    "coop_128x256_c2x1_streamk": f"Shape<_128, _256, _64>, Shape<_2, _1, _1>, {_COOP}, cutlass::gemm::StreamKScheduler",
    "pingpong_64x256_c2x1": f"Shape<_64, _256, _64>, Shape<_2, _1, _1>, {_PINGPONG}, {_PERSISTENT}",
    "pingpong_128x128_c1x2": f"Shape<_128, _128, _64>, Shape<_1, _2, _1>, {_PINGPONG}, {_PERSISTENT}",
}
TOLERANCE = 1e-2  # examples/gemm_bf16/gemm_bf16.py's CUTEGEN_ATOL = CUTEGEN_RTOL: bf16 output


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=list(RUNGS), choices=list(RUNGS))
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--candidates", action="store_true", help="also build and time the flagship candidates")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    kernels = {n: RUNGS[n] for n in args.only}
    if args.candidates:
        kernels.update(write_candidates(Path(tempfile.mkdtemp())))
    libraries, builds = build_all(kernels)
    rows = [time_shape(shape, SHAPES[shape], libraries) for shape in args.shapes]
    report = {"date": time.strftime("%Y-%m-%d"), "gpu": _gpu_name(), "builds": builds, "shapes": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


def write_candidates(folder: Path) -> dict[str, Path]:
    """The flagship's source with another schedule; the shared header is included by absolute path."""
    source = RUNGS["gemm_bf16"].read_text()
    header = (IDIOMS / "gemm_sm90_common.cuh").resolve()
    source = source.replace('#include "../idioms/gemm_sm90_common.cuh"', f'#include "{header}"')
    schedule = re.compile(r"Sm90Gemm<[^;]*>::Gemm;", re.S)
    assert schedule.search(source), "the flagship's Sm90Gemm<...>::Gemm line moved"
    out = {}
    for name, arguments in CANDIDATES.items():
        path = folder / f"{name}.cu"
        path.write_text(schedule.sub(lambda _: f"Sm90Gemm<{arguments}>::Gemm;", source))
        out[name] = path
    return out


def build_all(kernels: dict[str, Path]) -> tuple[dict, dict]:
    from cutegen.build import Tier
    from cutegen.harness.abi import KernelLibrary

    builder, worker, _ = engine()
    worker.stop()  # everything runs in this process: the kernels are timed side by side with cuBLAS
    with ThreadPoolExecutor(len(kernels)) as pool:
        results = dict(zip(kernels, pool.map(lambda p: builder.run(Tier.BUILD, p), kernels.values())))
    libraries, builds = {}, {}
    for name, build in results.items():
        regs = {r.name: r.registers for r in build.resources}
        builds[name] = {"ok": build.ok, "seconds": round(build.seconds, 1), "cached": build.cached, "registers": regs}
        if build.ok:
            libraries[name] = KernelLibrary(build.artifact)
            print(f"built {name:<34} {build.seconds:6.1f} s  registers {regs}", flush=True)
        else:
            first = build.errors[0].format() if build.errors else build.raw_log[-2000:]
            builds[name]["error"] = first
            print(f"built {name:<34} FAILED: {first}", flush=True)
    return libraries, builds


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
    timings = time_interleaved(fns)
    flops = 2 * m * n * k
    base = timings["cuBLAS"].median_ms
    row = {"shape": shape, "M": m, "N": n, "K": k, "kernels": []}
    print(f"\n{shape}: M={m} N={n} K={k}", flush=True)
    for name in ["cuBLAS", *libraries]:
        t = timings.get(name)
        entry = {"name": name, "status": status.get(name, "pass")}
        if t is not None:
            entry.update(median_ms=t.median_ms, spread=t.spread, trials=t.trials,
                         tflop_per_s=flops / (t.median_ms / 1e3) / 1e12, vs_cublas=base / t.median_ms)
            print(f"  {name:<34} {t.median_ms:7.3f} ms ±{t.spread:5.1%}  {entry['tflop_per_s']:6.1f} TFLOP/s  "
                  f"{entry['vs_cublas']:5.2f}x cuBLAS", flush=True)
        else:
            print(f"  {name:<34} {entry['status']}", flush=True)
        row["kernels"].append(entry)
    return row


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name()


if __name__ == "__main__":
    main()
