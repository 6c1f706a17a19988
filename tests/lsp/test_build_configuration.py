"""The editor with a project's compile_commands.json: nothing configured, a header opened by itself gets its errors
from the .cu that includes it (with the project's -I and -D), and the log names where the flags came from."""

from __future__ import annotations

import json

import pytest

from lsp_helpers import errors, needs_nvcc, open_file, publications, until

pytestmark = [pytest.mark.asyncio, needs_nvcc]


async def test_a_header_opened_alone_is_checked_through_its_translation_unit(client, workspace):
    header = workspace / "include" / "tile.cuh"
    header.parent.mkdir()
    header.write_text("#pragma once\n__device__ inline int tile(int i) {\n  return i * TILE * kMissing;\n}\n")
    source = workspace / "src" / "k.cu"
    source.parent.mkdir()
    source.write_text("#include <tile.cuh>\n__global__ void k(int* p) { p[0] = tile(3); }\n")
    build = workspace / "build"
    build.mkdir()
    entry = {"directory": str(build), "file": str(source),
             "command": f"nvcc -I../include -DTILE=4 -std=c++17 -arch=sm_80 -c {source} -o k.o"}
    (build / "compile_commands.json").write_text(json.dumps([entry]))

    uri = open_file(client, header)
    published = await until(lambda: publications(client, uri), 180, "diagnostics in the header")
    (error,) = errors(published[-1].diagnostics)
    assert error.range.start.line == 2 and "kMissing" in error.message  # TILE came from the entry's -D
    logged = await until(lambda: [m.message for m in client.log_messages if "tile.cuh: CUTLASS" in m.message],
                         30, "the configuration in the log")
    assert logged and "compile_commands.json (the entry for k.cu, checked through k.cu" in logged[0]
