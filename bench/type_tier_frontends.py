"""The type tier's decision, measured: NVRTC with its automatic PCH against clang (libclang) with a PCH, side by
side on the same files in one process, alternating, after one warm-up parse each (which builds the PCHs).

NVRTC is nvcc's own EDG front end (`nvidia-cuda-nvrtc`, not a dependency: `pip install nvidia-cuda-nvrtc==13.0.88`
and pass its lib folder). It compiles device code only, so the kernel file's host launcher needs
`-default-device` (host functions become device functions; `-rdc=true` declares cudaGetLastError there) and a
`stdint.h` that NVRTC lacks; `-fdevice-syntax-only` stops it after the front end, `-pch` with a 1 GB heap makes
it precompile the includes. Clang is the type tier itself (`TypeChecker.run`).

    PYTHONPATH=server python bench/type_tier_frontends.py --nvrtc-lib .../nvidia/cu13/lib [--rounds 2]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from cutegen.typecheck import TypeChecker  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import ABI_INCLUDE, discover  # noqa: E402

FILES = ["examples/softsign/softsign.cu", "examples/kernelbench/level1/26_GELU_.cu",
         "examples/kernelbench/level1/1_Square_matrix_multiplication_.cu", "examples/gemm_bf16/gemm_bf16.cu",
         "tests/corpus/errors/copy_rank_mismatch.cu", "tests/corpus/errors/host_fn_in_device.cu",
         "tests/corpus/errors/constexpr_user_fn.cu", "tests/corpus/model_errors/dispatch_undefined.cu"]


class Nvrtc:
    def __init__(self, lib: Path, toolchain, shim: Path) -> None:
        ctypes.CDLL(str(next(lib.glob("libnvrtc-builtins.so.*"))), mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(str(next(lib.glob("libnvrtc.so.*"))))
        self.lib.nvrtcSetPCHHeapSize(ctypes.c_size_t(1 << 30))  # CuTe's PCH needs ~300 MB; the default is less
        self.tc, self.shim, self.pch = toolchain, shim, Path(tempfile.mkdtemp(prefix="nvrtc-pch-"))

    def run(self, path: Path) -> tuple[float, list[str]]:
        arch = self.tc.arch.replace("sm_", "compute_")
        opts = ["-std=c++17", f"-arch={arch}", "-default-device", "-rdc=true", "-fdevice-syntax-only", "-pch",
                f"-pch-dir={self.pch}", f"-I{self.tc.cutlass_include}", f"-I{ABI_INCLUDE}", f"-I{path.parent}",
                f"-I{self.shim}", f"-I{self.tc.cuda_root}/include", f"-I{self.tc.cuda_root}/include/cccl", "-w"]
        prog = ctypes.c_void_p()
        self.lib.nvrtcCreateProgram(ctypes.byref(prog), path.read_bytes(), str(path).encode(), 0, None, None)
        started = time.perf_counter()
        self.lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts]))
        seconds = time.perf_counter() - started
        size = ctypes.c_size_t()
        self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        self.lib.nvrtcGetProgramLog(prog, log)
        self.lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return seconds, [line for line in log.value.decode(errors="replace").splitlines() if ": error" in line]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvrtc-lib", type=Path, required=True, help="the nvidia-cuda-nvrtc wheel's nvidia/cu13/lib")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    tc = discover(Settings())
    shim = Path(tempfile.mkdtemp(prefix="nvrtc-shim-"))
    (shim / "stdint.h").write_text("#pragma once\n#include <cuda/std/cstdint>\n")
    nvrtc, clang = Nvrtc(args.nvrtc_lib, tc, shim), TypeChecker(tc, Settings(), Path(tempfile.mkdtemp()) / ".cutegen")
    rows = []
    for rel in FILES:
        path = ROOT / rel
        nvrtc.run(path), clang.run(path)  # warm-up: both build their PCH
        times = {"nvrtc": [], "clang": []}
        for _ in range(args.rounds):
            seconds, nvrtc_errors = nvrtc.run(path)
            times["nvrtc"].append(seconds)
            result = clang.run(path)
            times["clang"].append(result.seconds)
        row = {"file": rel, "nvrtc_s": statistics.median(times["nvrtc"]), "clang_s": statistics.median(times["clang"]),
               "nvrtc_errors": len(nvrtc_errors), "nvrtc_first": nvrtc_errors[0][-160:] if nvrtc_errors else "",
               "clang_errors": len(result.errors), "clang_first": result.errors[0].format()[-160:] if result.errors else ""}
        rows.append(row)
        print(f"{rel:<62} nvrtc {row['nvrtc_s']:6.2f} s {row['nvrtc_errors']:3} err | clang {row['clang_s']:6.2f} s "
              f"{row['clang_errors']:3} err\n    nvrtc: {row['nvrtc_first']}\n    clang: {row['clang_first']}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
