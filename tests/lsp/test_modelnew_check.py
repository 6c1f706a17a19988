"""A KernelBench ModelNew file is checked in the editor too: its diagnostics land on the Python file's lines."""

from __future__ import annotations

import pytest

from lsp_helpers import errors, open_file, publications, until

pytestmark = [pytest.mark.asyncio]

MODELNEW = '''import torch
from torch.utils.cpp_extension import load_inline

source = """
__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }
"""
ext = load_inline(name="scale", cpp_sources="", cuda_sources=source, functions=[])

class ModelNew(torch.nn.Module):
    def forward(self, x)
        return x
'''


async def test_modelnew_python_error_is_published_at_its_line_and_plain_python_is_left_alone(client, workspace):
    plain = workspace / "helper.py"
    plain.write_text("def f(:\n")
    plain_uri = open_file(client, plain)
    path = workspace / "scale_modelnew.py"
    path.write_text(MODELNEW)
    uri = open_file(client, path)
    (first,) = await until(lambda: publications(client, uri), what="diagnostics for the ModelNew file")
    (error,) = errors(first.diagnostics)
    assert error.range.start.line == 9  # `def forward(self, x)` lacks its colon: line 10, 0-based 9
    assert error.code == "python-syntax"
    assert not publications(client, plain_uri)  # opened first, never compiled: not a ModelNew file
