"""On the GPU: Profile Program and Sanitize Program through the real language server (the palette's path): the
user's own CUDA program (built by its own nvcc command) under Nsight Compute, its hot line marked and hovered in its
source, and its out-of-bounds store published as a diagnostic at its line by compute-sanitizer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_helpers import open_file, until
from test_program_command import _run
from test_profile_lens import _hints, _hover

from cutegen.lsp.command_ids import Command
from tests.profiler.test_program_gpu import PROGRAM, line_of

pytestmark = [pytest.mark.gpu, pytest.mark.asyncio]
HOT, BUG = line_of("// HOT"), line_of("// BUG")


def build(workspace: Path) -> Path:
    source = workspace / "bench.cu"
    source.write_text(PROGRAM)
    subprocess.run(["nvcc", "-O3", "-lineinfo", "-o", "bench", "bench.cu"], cwd=workspace, check=True, timeout=300)
    return source


@pytest.mark.cutegen_settings({"programCommand": ["./bench", "--size", "4096"], "programKernel": "hot_loop",
                               "programLaunches": 1})
async def test_profile_program_marks_the_hot_line_in_its_source(client, workspace):
    source = build(workspace)
    answer = await _run(client, Command.PROFILE_PROGRAM, workspace.as_uri())
    print(answer)
    assert answer["ok"] and f"hottest bench.cu:{HOT} " in answer["message"]
    uri = open_file(client, source)
    hints = await _hints(client, uri, len(PROGRAM.splitlines()))
    assert HOT in hints and "%" in hints[HOT]
    assert f"CuTeGen profile · line {HOT}:" in await _hover(client, uri, HOT)


@pytest.mark.cutegen_settings({"programCommand": ["./bench", "--bug"]})
async def test_sanitize_program_publishes_the_bug_at_its_line(client, workspace):
    source = build(workspace)
    answer = await _run(client, Command.SANITIZE_PROGRAM, workspace.as_uri())
    print(answer)
    assert answer["ok"] is False and answer["findings"] >= 1
    published = await until(lambda: client.diagnostics.get(source.as_uri()), timeout=30, what="the findings")
    assert any(d.range.start.line == BUG - 1 and "memcheck" in d.message for d in published)
