"""Every nvcc/host-compiler refusal is a located diagnostic in the tool's own words, never a traceback."""

from __future__ import annotations

from pathlib import Path

from cutegen.compile import Tier
from cutegen.diagnostics import condense, parse_log
from cutegen.settings import Settings

# Real outputs (nvcc 13.0; torch 2.13 CPU wheel, whose c10/cuda headers are incomplete), paths shortened.
SM70_LOG = "nvcc fatal   : Unsupported gpu architecture 'compute_70'\n"
CPU_TORCH_LOG = """\
In file included from $TORCH/include/c10/cuda/CUDADeviceAssertionHost.h:4,
                 from $TORCH/include/c10/cuda/CUDAException.h:4,
                 from model_new.py:11:
$TORCH/include/c10/cuda/CUDAMacros.h:9:10: fatal error: c10/cuda/impl/cuda_cmake_macros.h: No such file or directory
    9 | #include <c10/cuda/impl/cuda_cmake_macros.h>
      |          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
compilation terminated.
"""
KERNEL = "__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }\n"


def _condense(log: str, main: str):
    return condense(parse_log(log), main, lambda f: not f.startswith("$TORCH"), lambda f: [])


def test_nvcc_fatal_is_an_error_at_line_1_in_nvccs_words():
    (d,) = _condense(SM70_LOG, "k.cu")
    assert (d.line, d.severity.value) == (1, "error")
    assert d.message.startswith("nvcc fatal: Unsupported gpu architecture 'compute_70'")
    assert "choose another target arch" in d.message


def test_host_error_in_a_header_lands_on_the_users_include_line():
    (d,) = _condense(CPU_TORCH_LOG, "model_new.py")
    assert (d.file, d.line) == ("model_new.py", 11)
    assert "c10/cuda/CUDAMacros.h:9" in d.message and "cuda_cmake_macros.h: No such file" in d.message
    assert "CPU-only build" in d.message


def test_unsupported_arch_through_the_builder(make_session, tmp_path):
    kernel = tmp_path / "scale.cu"
    kernel.write_text(KERNEL)
    result = make_session(Settings(arch="sm_70"), state_dir=tmp_path / "state").check(kernel).result
    assert not result.ok
    (d,) = result.errors
    assert d.line == 1 and "Unsupported gpu architecture 'compute_70'" in d.message


def test_a_python_file_without_load_inline_is_a_plain_error(builder, tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print('hello')\n")
    result = builder.run(Tier.CHECK, script)
    (d,) = result.errors
    assert d.code == "no-cuda-sources" and "load_inline" in d.message
    assert Path(d.file) == script.resolve()


def test_check_timeout_is_the_setting_and_named(make_session, tmp_path):
    kernel = tmp_path / "slow.cu"
    kernel.write_text("#include <cute/tensor.hpp>\n" + KERNEL)
    result = make_session(Settings(check_timeout=0.3), state_dir=tmp_path / "state").check(kernel).result
    (d,) = result.errors
    assert d.code == "timeout" and "0 s" not in d.message
    assert "within 0.3 s" in d.message and "check timeout" in d.message and "checkTimeout" in d.message


def test_host_compiler_refusing_a_flag_is_an_error_line():
    (d,) = _condense("gcc: error: unrecognized command-line option \u2018-fbogus\u2019\n", "k.cu")
    assert d.line == 1 and d.message == "host compiler error: unrecognized command-line option \u2018-fbogus\u2019"


def test_warnings_from_torch_and_isystem_headers_are_dropped(make_session, tmp_path):
    """A warning EDG prints from a system header (torch's, an -isystem directory's) is not the user's."""
    from cutegen.toolchain import torch_include_dirs

    vendor = tmp_path / "vendor"
    vendor.mkdir()
    log = (f"{vendor}/lib.h(3): warning #177-D: variable \"unused\" was declared but never referenced\n"
           "    int unused;\n        ^\n\n")
    if torch_include_dirs():
        log += (f"{torch_include_dirs()[0]}/c10/util/Half.h(5): warning #20012-D: __host__ annotation is ignored\n"
                "  x\n  ^\n\n")
    builder = make_session(Settings(extra_flags=["-isystem", str(vendor)]), state_dir=tmp_path / "state").builder(
        tmp_path / "k.cu")
    diagnostics, _ = builder._diagnose(log, tmp_path / "k.cu", KERNEL, None)
    assert diagnostics == []
