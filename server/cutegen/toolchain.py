"""Finds nvcc, its version, the CuTe/CUTLASS headers and the target architecture.

Every failure is a ToolchainError whose message says what is missing and how to fix it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cutegen.settings import Settings, editor_key

DEFAULT_ARCH = "sm_90a"
ABI_INCLUDE = Path(__file__).parent / "include"


class ToolchainError(RuntimeError):
    """The toolchain cannot be used; the message is meant for the user as is."""


@dataclass(frozen=True)
class Toolchain:
    nvcc: str
    nvcc_version: str  # e.g. "13.0.88"
    cutlass_include: str
    cutlass_version: str
    arch: str  # e.g. "sm_90a"
    arch_source: str  # "setting", "local GPU" or "default"
    cuda_root: str = ""  # the toolkit's real directory (nvcc may be a wrapper script elsewhere)
    # "setting", "CUTLASS_PATH" or "wheel"; a project's own CUTLASS is chosen per file (compile/configuration.py)
    cutlass_origin: str = "wheel"

    @property
    def gencode(self) -> list[str]:
        """`-gencode arch=compute_90a,code=sm_90a`: with nvcc 13 the `-arch=sm_90a` shorthand also runs a
        plain compute_90 pass (slower, and it rejects wgmma)."""
        num = self.arch.removeprefix("sm_")
        return ["-gencode", f"arch=compute_{num},code=sm_{num}"]

    @property
    def ptxas_arch(self) -> str:
        return self.arch

    @property
    def fingerprint(self) -> str:
        """Part of every cache key: a new nvcc, CUTLASS or arch must not hit old entries."""
        text = f"{self.nvcc}|{self.nvcc_version}|{self.cutlass_include}|{self.cutlass_version}|{self.arch}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def tool(self, name: str) -> str | None:
        """A tool of the toolkit (ptxas, cu++filt, cuobjdump), else the one on PATH, else None."""
        for d in (Path(self.cuda_root) / "bin", Path(self.nvcc).parent):
            if (d / name).exists():
                return str(d / name)
        return shutil.which(name)


def discover(settings: Settings | None = None) -> Toolchain:
    settings = settings or Settings()
    try:
        return _discover(settings)
    except ToolchainError as e:  # name the settings as the user's interface does (CLI flags or cutegen.*)
        text = str(e)
        for name in ("nvcc", "cutlass_path", "arch"):
            text = text.replace(editor_key(name), settings.name_of(name))
        raise ToolchainError(text) from None


def _discover(settings: Settings) -> Toolchain:
    nvcc = find_nvcc(settings.nvcc)
    include = find_cutlass_include(settings.cutlass_path)
    arch, source = find_arch(settings.arch)
    origin = "setting" if settings.cutlass_path else "CUTLASS_PATH" if os.environ.get("CUTLASS_PATH") else "wheel"
    return Toolchain(nvcc, nvcc_version(nvcc), str(include), cutlass_version(include), arch, source, cuda_root(nvcc),
                     origin)


def find_nvcc(setting: str | None) -> str:
    if setting:
        if Path(setting).is_file() and os.access(setting, os.X_OK):
            return str(Path(setting).resolve())
        raise ToolchainError(f"nvcc not found at '{setting}' (setting cutegen.nvcc): point it at an nvcc executable.")
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda_home and (Path(cuda_home) / "bin" / "nvcc").is_file():
        return str(Path(cuda_home) / "bin" / "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    raise ToolchainError(
        "nvcc was not found: install the CUDA toolkit (12.8 or newer), then put nvcc on PATH, "
        "set CUDA_HOME, or set cutegen.nvcc to its path."
    )


@lru_cache(maxsize=8)
def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolchainError(f"nvcc at '{nvcc}' does not run: {e}") from e
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    if not m:
        raise ToolchainError(f"'{nvcc} --version' printed no version; is it really nvcc?")
    return m.group(1)


@lru_cache(maxsize=8)
def cuda_root(nvcc: str) -> str:
    """nvcc's own idea of its toolkit directory (`TOP` in --dryrun), which survives wrapper scripts."""
    try:
        out = subprocess.run([nvcc, "--dryrun", "-c", "x.cu"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return str(Path(nvcc).resolve().parent.parent)
    m = re.search(r"^#\$ TOP=(.+)$", out.stdout + out.stderr, re.M)
    return os.path.realpath(m.group(1).strip()) if m else str(Path(nvcc).resolve().parent.parent)


def find_cutlass_include(setting: str | None) -> Path:
    for origin, candidate in (("setting cutegen.cutlassPath", setting),
                              ("CUTLASS_PATH", os.environ.get("CUTLASS_PATH"))):
        if candidate:
            include = _as_include_dir(Path(candidate))
            if include is None:
                raise ToolchainError(
                    f"No CuTe headers under '{candidate}' ({origin}): it must contain cute/tensor.hpp, "
                    "directly or in include/."
                )
            return include
    include = _wheel_include()
    if include is None:
        raise ToolchainError(
            "CuTe/CUTLASS headers not found: `pip install nvidia-cutlass==4.2.0.0` (it ships them), "
            "or set CUTLASS_PATH / cutegen.cutlassPath to a CUTLASS checkout."
        )
    return include


def _as_include_dir(path: Path) -> Path | None:
    for p in (path, path / "include"):
        if (p / "cute" / "tensor.hpp").is_file():
            return p.resolve()
    return None


def util_include(include: Path) -> Path | None:
    """CUTLASS's `tools/util/include` beside its `include/` (a checkout's, or the wheel's under
    cutlass_library/source): CUTLASS's own examples include `cutlass/util/print_error.hpp` and others from it."""
    util = Path(include).parent / "tools" / "util" / "include"
    return util if (util / "cutlass" / "util").is_dir() else None


def _wheel_include() -> Path | None:
    # Located, not imported: importing cutlass_library runs its whole kernel-generator package.
    import importlib.util

    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    return _as_include_dir(Path(list(spec.submodule_search_locations)[0]) / "source")


@lru_cache(maxsize=8)
def cutlass_version(include: Path) -> str:
    header = Path(include) / "cutlass" / "version.h"
    try:
        text = header.read_text()
    except OSError:
        return "unknown"
    parts = [re.search(rf"#define CUTLASS_{k} (\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) or "unknown"


def find_arch(setting: str | None) -> tuple[str, str]:
    if setting:
        if not re.fullmatch(r"sm_\d{2,3}[af]?", setting):
            raise ToolchainError(f"cutegen.arch must look like 'sm_90a' or 'sm_80', not '{setting}'.")
        return setting, "setting"
    local = local_gpu_arch()
    if local:
        return local, "local GPU"
    return DEFAULT_ARCH, "default"


@lru_cache(maxsize=1)
def local_gpu_arch() -> str | None:
    """The first GPU's arch (hardware.local: nvidia-smi, no CUDA context); Hopper gets the 'a' variant for wgmma."""
    from cutegen.hardware import local

    gpu = local()
    return gpu.arch if gpu else None


_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?:torch|ATen|c10|pybind11)/', re.M)


def includes_torch(source: str) -> bool:
    return _TORCH_INCLUDE.search(source) is not None


@lru_cache(maxsize=1)
def torch_include_dirs() -> tuple[str, ...]:
    """PyTorch's and Python's include directories, found without importing torch (which takes seconds):
    what torch.utils.cpp_extension passes, for checking kernels that include <torch/extension.h>."""
    import importlib.util
    import sysconfig

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return ()
    include = Path(list(spec.submodule_search_locations)[0]) / "include"
    dirs = [include, include / "torch" / "csrc" / "api" / "include", Path(sysconfig.get_paths()["include"])]
    if include.is_dir() and not (include / CPU_TORCH_GAP).is_file():
        dirs.append(CPU_TORCH_SHIM)  # searched last: a CUDA build's own copy always wins
    return tuple(str(d) for d in dirs if d.is_dir())


# Decision: a CPU-only torch (the project's own .venv, CI) lacks the one header its CUDA builds generate at build
# time, `c10/cuda/impl/cuda_cmake_macros.h` (two lines: `#pragma once` and one #define), so a ModelNew that
# includes <c10/cuda/CUDAStream.h> could not be checked there. The package ships that generated file and adds its
# folder after torch's own; the rest of c10/cuda is plain headers in every wheel. Running a ModelNew still needs a
# CUDA build of torch, on the GPU machine.
CPU_TORCH_GAP = Path("c10") / "cuda" / "impl" / "cuda_cmake_macros.h"
CPU_TORCH_SHIM = Path(__file__).resolve().parent / "include" / "cpu-torch"


# torch.utils.cpp_extension's own nvcc flags (COMMON_NVCC_FLAGS), so a check sees what load_inline compiles.
TORCH_NVCC_FLAGS = ("-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr",
                    "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=cutegen_check")
