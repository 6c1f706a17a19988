"""Shared by the ABI tests: real shared libraries of host code, built with the system C++ compiler against abi.h,
for the ctypes call itself (no GPU, no nvcc)."""

from __future__ import annotations

import pytest

from tests.support import host_library as host


@pytest.fixture(scope="module")
def host_library(toolchain, tmp_path_factory):
    """build(name, source) -> the path of lib{name}.so, compiled from `source` (which includes <cutegen/abi.h>)."""
    cxx = host.compiler()
    if cxx is None:
        pytest.skip("no host C++ compiler")
    folder = tmp_path_factory.mktemp("abi-host")
    return lambda name, source: host.build(folder, name, source, toolchain.cuda_root, cxx)
