"""Shared by the ABI tests: real shared libraries of host code, built with the system C++ compiler against abi.h,
for the ctypes call itself (no GPU, no nvcc)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ABI_INCLUDE = Path(__file__).resolve().parents[2] / "server" / "cutegen" / "include"


@pytest.fixture(scope="module")
def host_library(toolchain, tmp_path_factory):
    """build(name, source) -> the path of lib{name}.so, compiled from `source` (which includes <cutegen/abi.h>)."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    folder = tmp_path_factory.mktemp("abi-host")

    def build(name: str, source: str) -> str:
        (folder / f"{name}.cpp").write_text(source)
        lib = folder / f"lib{name}.so"
        subprocess.run([compiler, "-shared", "-fPIC", "-O1", f"-I{ABI_INCLUDE}", f"-I{toolchain.cuda_root}/include",
                        str(folder / f"{name}.cpp"), "-o", str(lib)], check=True, capture_output=True, text=True)
        return str(lib)

    return build
