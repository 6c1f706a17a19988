"""`cutegen check` on a KernelBench ModelNew file: its load_inline CUDA sources, errors at the Python lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.compile.inline_sources import as_cuda_file, cuda_sources
from tests.support.paths import ROOT

SOFTSIGN = ROOT / "examples" / "softsign_modelnew" / "softsign_modelnew.py"

MODELNEW = '''\
import torch
from torch.utils.cpp_extension import load_inline

cpp = "torch::Tensor scale_cuda(torch::Tensor x);"
cuda = """
#include <torch/extension.h>

__global__ void scale_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[j];
}

torch::Tensor scale_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="scale", cpp_sources=cpp, cuda_sources=[cuda], functions=["scale_cuda"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.scale_cuda(x)
'''


def test_sources_are_found_through_names_and_lists():
    (src,) = cuda_sources(SOFTSIGN.read_text())
    lines = SOFTSIGN.read_text().splitlines()
    first_code = src.text.splitlines()[1]  # line 0 is the rest of the `"""` line
    assert lines[src.line] == first_code == "#include <torch/extension.h>" and src.exact
    (src,) = cuda_sources(MODELNEW)
    assert src.line == 5 and "scale_kernel" in src.text


def test_the_generated_file_reports_python_lines(tmp_path):
    py = tmp_path / "m.py"
    text = as_cuda_file(py, cuda_sources(MODELNEW))
    assert f'#line 5 "{py}"' in text and text.startswith("#include <torch/types.h>")


def test_a_file_that_does_not_parse_has_no_sources():
    assert cuda_sources("def broken(:\n") == []


@pytest.mark.slow
def test_check_maps_an_error_to_the_python_line(builder, kept_path):
    """Compiles PyTorch's headers (about 35-45 s on 2 cores; a kept folder: once, then a cache hit)."""
    py = kept_path / "scale_modelnew.py"
    py.write_text(MODELNEW)
    result = builder.run(Tier.CHECK, py)
    assert not result.ok
    (d,) = result.errors
    assert (d.file, d.line) == (str(py), 10) and 'identifier "j" is undefined' in d.message
    assert d.col == MODELNEW.splitlines()[9].index("x[j]") + 3
    # torch's headers are system headers: none of their warnings reach the user.
    assert not [w for w in result.diagnostics if w.severity.value == "warning"]


def test_concatenated_sources_keep_their_own_lines():
    text = 'head = """\n#include <torch/extension.h>\n"""\nbody = """\n__global__ void k() {}\n"""\n' \
           'm = load_inline(name="m", cpp_sources="", cuda_sources=head + body)\n'
    first, second = cuda_sources(text)
    assert (first.line, second.line) == (1, 4) and "__global__" in second.text


def test_a_python_syntax_error_is_reported_at_its_line(builder, tmp_path):
    py = tmp_path / "broken_modelnew.py"
    py.write_text("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n")
    (d,) = builder.run(Tier.CHECK, py).errors
    assert d.line == 2 and d.code == "python-syntax" and "load_inline sources cannot be read" in d.message


def test_a_cpu_only_torch_gets_the_one_generated_header_it_lacks():
    from cutegen.toolchain import CPU_TORCH_GAP, CPU_TORCH_SHIM, torch_include_dirs

    dirs = torch_include_dirs()
    if not dirs:
        pytest.skip("torch is not installed")
    own = dirs[0]
    if (Path(own) / CPU_TORCH_GAP).is_file():  # a CUDA build: its own generated header, no shim
        assert str(CPU_TORCH_SHIM) not in dirs
    else:
        assert dirs[-1] == str(CPU_TORCH_SHIM)  # after torch's own folders
    assert "#define C10_CUDA_BUILD_SHARED_LIBS" in (CPU_TORCH_SHIM / CPU_TORCH_GAP).read_text()


@pytest.mark.slow
def test_the_bundled_modelnew_example_checks_clean(builder):
    """The bundled ModelNew example (examples/softsign_modelnew) in the project's own CPU .venv (PyTorch's headers: 40-110 s on 2 cores)."""
    result = builder.run(Tier.CHECK, SOFTSIGN)
    assert result.ok, [d.message for d in result.diagnostics]
    assert [k.name for k in result.resources] == ["softsign_kernel"]
