"""Build tiers: cache, unsaved text, cancellation, the build artifact, toolchain errors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cutegen.compile import Builder, Tier
from cutegen.settings import Settings
from cutegen.toolchain import ToolchainError, discover

GOOD = """#include <cute/tensor.hpp>
#include <cutegen/abi.h>
#include "scale.h"
using namespace cute;

__global__ void scale_kernel(const float* x, float* y, int n) {
  Tensor gx = make_tensor(make_gmem_ptr(x), make_shape(n));
  Tensor gy = make_tensor(make_gmem_ptr(y), make_shape(n));
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) gy(i) = kScale * gx(i);
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* in, int nin, DLTensor* out, int nout, cudaStream_t s) {
  int n = (int)cutegen_numel(in[0]);
  scale_kernel<<<(n + 255) / 256, 256, 0, s>>>(cutegen_data<const float>(in[0]), cutegen_data<float>(out[0]), n);
  return (int)cudaGetLastError();
}
"""
BROKEN_LINE = "  auto r = make_tensor<float>(make_shape(n));  // dynamic owning tensor\n"


@pytest.fixture
def kernel(tmp_path) -> Path:
    (tmp_path / "scale.h").write_text("constexpr float kScale = 2.0f;\n")
    path = tmp_path / "scale.cu"
    path.write_text(GOOD)
    return path


def test_cache_hit_skips_nvcc_and_header_edit_invalidates(builder, kernel):
    first = builder.run(Tier.CHECK, kernel)
    assert first.ok and not first.cached
    again = builder.run(Tier.CHECK, kernel)
    assert again.cached and again.ok and again.seconds == 0.0
    assert [d.message for d in again.diagnostics] == [d.message for d in first.diagnostics]
    (kernel.parent / "scale.h").write_text("constexpr float kScale = 3.0f;\n")
    assert not builder.run(Tier.CHECK, kernel).cached


def test_unsaved_text_is_checked_not_the_file_on_disk(builder, kernel):
    text = GOOD.replace("  int i = blockIdx.x", BROKEN_LINE + "  int i = blockIdx.x")
    result = builder.run(Tier.CHECK, kernel, text=text)
    assert [(d.line, d.root) for d in result.errors] == [(9, "Dynamic owning tensors not supported")]
    assert result.errors[0].file == str(kernel.resolve())  # the user's path, not a cache copy
    assert kernel.read_text() == GOOD  # nothing written over the user's file


def test_newer_request_cancels_older_and_kills_nvcc(builder, kernel):
    results = {}
    text_a = GOOD + "\n// a\n"
    worker = threading.Thread(target=lambda: results.setdefault("a", builder.run(Tier.CHECK, kernel, text=text_a)))
    worker.start()
    time.sleep(0.8)  # nvcc is running now
    results["b"] = builder.run(Tier.CHECK, kernel, text=GOOD + "\n// b\n")
    worker.join(60)
    assert results["a"].cancelled and not results["a"].ok
    assert results["b"].ok and not results["b"].cancelled
    assert not _processes_compiling(kernel.name), "a cancelled nvcc/cicc is still running"


def test_two_builders_compiling_one_text_at_once_compile_it_once(toolchain, kernel, tmp_path):
    """Two processes on one `.cutegen/` (two Builders on one state folder, as two test workers or an editor beside
    the CLI): the second waits for the first's compile and is served its stored outcome, instead of nvcc writing
    the same .ptx in one cache entry twice at once (where one could read the other's half-written file)."""
    builders = [Builder(toolchain, Settings(), tmp_path / "state") for _ in range(2)]
    results: list = [None, None]
    start = threading.Barrier(2)

    def check(i: int) -> None:
        start.wait()
        results[i] = builders[i].run(Tier.CHECK, kernel)

    threads = [threading.Thread(target=check, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert all(r.ok for r in results), [[d.format() for d in r.diagnostics] for r in results]
    assert sorted(r.cached for r in results) == [False, True]
    assert [d.message for d in results[0].diagnostics] == [d.message for d in results[1].diagnostics]


def test_a_run_waiting_for_another_compile_of_its_text_can_be_cancelled(builder, kernel):
    key = builder._key(Tier.CHECK, kernel.resolve(), GOOD, GOOD)
    results: dict = {}
    with builder.cache.compiling(key, lambda: False):  # another process is compiling this very text
        waiter = threading.Thread(target=lambda: results.setdefault("r", builder.run(Tier.CHECK, kernel, job="w")))
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive()  # waiting, not compiling beside the other
        builder.cancel("w")
        waiter.join(10)
        assert not waiter.is_alive()
    assert results["r"].cancelled and not results["r"].ok
    again = builder.run(Tier.CHECK, kernel)  # nothing of the cancelled wait was stored
    assert again.ok and not again.cached


def _processes_compiling(name: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if name in cmd and ("cicc" in cmd or "nvcc" in cmd or "cudafe" in cmd):
            found.append(cmd)
    return found


def test_build_tier_produces_loadable_library_with_the_abi_symbol(builder, kernel):
    result = builder.run(Tier.BUILD, kernel)
    assert result.ok, [d.format() for d in result.diagnostics]
    data = Path(result.artifact).read_bytes()
    assert data[:4] == b"\x7fELF" and b"cutegen_forward" in data
    assert result.resources and result.resources[0].name == "scale_kernel"
    assert result.resources[0].line == 6


def test_missing_nvcc_is_one_clear_message():
    with pytest.raises(ToolchainError, match="cutegen.nvcc"):
        discover(Settings(nvcc="/nonexistent/nvcc"))


def test_missing_headers_is_one_clear_message(tmp_path):
    with pytest.raises(ToolchainError, match="cute/tensor.hpp"):
        discover(Settings(cutlass_path=str(tmp_path)))


def test_bad_arch_setting_is_rejected():
    with pytest.raises(ToolchainError, match="sm_90a"):
        discover(Settings(arch="hopper"))


def test_timeout_is_reported_not_hung(toolchain, kernel, tmp_path):
    builder = Builder(toolchain, Settings(check_timeout=0.3), tmp_path / "state")
    result = builder.run(Tier.CHECK, kernel)
    assert not result.ok
    assert result.errors[0].code == "timeout" and "cutegen.checkTimeout" in result.errors[0].message


def test_cache_hit_starts_no_process_and_diagnoses_as_the_miss(toolchain, kernel, tmp_path, monkeypatch):
    """A hit reads the stored diagnosis: no nvcc, no ptxas, no demangler (cu++filt/c++filt). The demangling
    is left to the toolkit's tool (as for a name the cpp_demangle package cannot read), so the miss starts one."""
    monkeypatch.setitem(sys.modules, "cpp_demangle", None)  # `import cpp_demangle` raises ImportError
    started: list[str] = []
    real_popen = subprocess.Popen

    class CountingPopen(real_popen):  # every real spawn, subprocess.run's too, still runs
        def __init__(self, args, *a, **kw):
            started.append(os.path.basename(str(args[0] if isinstance(args, (list, tuple)) else args)))
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", CountingPopen)
    warns = GOOD.replace("  int i = blockIdx.x", "  int unused_i = 0;\n  int i = blockIdx.x")
    builder = Builder(toolchain, Settings(check_timeout=600), tmp_path / "state")  # a cold cache: a real miss
    miss = builder.run(Tier.CHECK, kernel, text=warns)
    assert not miss.cached and miss.ok and miss.resources, [d.format() for d in miss.diagnostics]
    assert {"nvcc", "ptxas"} <= set(started) and any(n.endswith("filt") for n in started), started
    started.clear()
    hit = builder.run(Tier.CHECK, kernel, text=warns)
    assert hit.cached and started == []
    assert [d.to_json() for d in hit.diagnostics] == [d.to_json() for d in miss.diagnostics]
    assert hit.resources == miss.resources and hit.resources[0].name == "scale_kernel"


def test_a_stored_diagnosis_of_other_condenser_code_is_made_again(builder, kernel, monkeypatch):
    """The key covers the compile, not the condenser: a diagnosis stored by other code is not served."""
    from cutegen.compile import builder as builder_module

    first = builder.run(Tier.CHECK, kernel)
    monkeypatch.setattr(builder_module, "diagnosis_code", lambda: "other condenser")
    made = []
    real = builder._diagnose
    monkeypatch.setattr(builder, "_diagnose", lambda *a: made.append(a) or real(*a))
    again = builder.run(Tier.CHECK, kernel)
    assert again.cached and len(made) == 1
    assert [d.to_json() for d in again.diagnostics] == [d.to_json() for d in first.diagnostics]


def test_the_probe_tier_is_compiled_not_diagnosed(toolchain, kernel, tmp_path):
    with pytest.raises(ValueError, match="Builder.compile"):
        Builder(toolchain, Settings(), tmp_path / "state").run(Tier.PROBE, kernel)
