"""examples/idioms/gemm_sm90_common.cuh makes CUTLASS a release build (NDEBUG) and silences two CUTLASS-internal
warnings for its own text only: the file that includes it keeps its own asserts. Read with the preprocessor alone
(seconds; a check of an includer takes minutes): NDEBUG after the header, and the asserts the text still calls."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cutegen.toolchain import ABI_INCLUDE
from tests.conftest import ROOT

HEADER = ROOT / "examples" / "idioms" / "gemm_sm90_common.cuh"
INCLUDER = f"""#include "{HEADER}"
__device__ void mine(int x) {{ assert(x > 0); }}
#if defined(NDEBUG) != defined(EXPECT_NDEBUG)
#error "NDEBUG after gemm_sm90_common.cuh is not what the includer had"
#endif
"""
_ASSERT_CALL = re.compile(r":\s*__assert_fail\s*\(")  # an assert that stayed in: `cond ? void(0) : __assert_fail(`


def _preprocessed(toolchain, tmp_path: Path, *defines: str) -> str:
    source = tmp_path / "includer.cu"
    source.write_text(INCLUDER)
    out = tmp_path / "includer.ii"
    run = subprocess.run([toolchain.nvcc, "-std=c++17", *toolchain.gencode, f"-I{toolchain.cutlass_include}",
                          f"-I{ABI_INCLUDE}", *defines, "-E", str(source), "-o", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return out.read_text(errors="replace")


def test_the_includer_keeps_its_asserts_and_cutlass_loses_its_own(toolchain, tmp_path):
    text = _preprocessed(toolchain, tmp_path)
    calls = [m.start() for m in _ASSERT_CALL.finditer(text)]
    assert len(calls) == 1, f"{len(calls)} asserts stayed in; only the includer's own should"
    assert text.rfind("void mine(") < calls[0]  # and it is the includer's


def test_an_includer_built_with_ndebug_keeps_it(toolchain, tmp_path):
    text = _preprocessed(toolchain, tmp_path, "-DNDEBUG", "-DEXPECT_NDEBUG")
    assert not _ASSERT_CALL.search(text)

