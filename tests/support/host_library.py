"""Real shared libraries of host code for the kernel ABI, built with the system C++ compiler against abi.h (no GPU,
no nvcc): the ABI tests' launchers (tests/harness/conftest.py) and bench/abi_call_overhead.py's no-op."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ABI_INCLUDE = Path(__file__).resolve().parents[2] / "server" / "cutegen" / "include"


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++")


def build(folder: Path, name: str, source: str, cuda_root: str | Path, cxx: str) -> str:
    """lib{name}.so in `folder`, compiled from `source` (which includes <cutegen/abi.h>); raises CalledProcessError
    with the compiler's output."""
    (folder / f"{name}.cpp").write_text(source)
    lib = folder / f"lib{name}.so"
    subprocess.run([cxx, "-shared", "-fPIC", "-O2", f"-I{ABI_INCLUDE}", f"-I{cuda_root}/include",
                    str(folder / f"{name}.cpp"), "-o", str(lib)], check=True, capture_output=True, text=True)
    return str(lib)
