"""The figures of a real H200 bench reach the editor: CodeLens and hover show the record's one-line summary
(the same line the CLI prints and the status bar gets), from records captured on the GPU (tests/records/h200)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_helpers import open_file

from cutegen.records import SCHEMA_VERSION
from cutegen.state import StateDir

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[2]
H200_RECORDS = ROOT / "tests" / "records" / "h200"
BENCH = "pass · 3.17 ms · 3.32× eager · 1.04× torch.compile · 95 % of HBM peak"
PROFILE = "profiled · memory-bound at 97% of achievable DRAM bandwidth (4.15 of 4.30 TB/s)"
TAIL = "mismatch · tail (296 of 3,146,024 wrong)"


def _place(workspace: Path, kernel: Path, fixture: str, kind: str, **override) -> None:
    """A captured record, stored where the server looks for `kernel`'s latest `kind` ($WORK → the workspace)."""
    text = (H200_RECORDS / fixture).read_text().replace("$WORK/examples/softsign", str(kernel.parent))
    record = {**json.loads(text), **override}
    path = StateDir(workspace / ".cutegen").latest_record(kernel, kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def _softsign(workspace: Path) -> Path:
    kernel = workspace / "softsign.cu"
    kernel.write_text((ROOT / "examples" / "softsign" / "softsign.cu").read_text())
    return kernel


async def _lens_titles(client, uri: str) -> list[str]:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    return [lens.command.title for lens in lenses]


async def _hover_on(client, uri: str, text: str, word: str) -> str:
    line = next(i for i, l in enumerate(text.splitlines()) if word in l and ("__global__" in l or "extern" in l
                                                                            or "cutegen_forward(" in l))
    col = text.splitlines()[line].index(word) + 1
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=col)))
    return hover.contents.value if hover else ""


async def test_a_real_bench_record_shows_its_figures_in_code_lens_and_hover(client, workspace):
    kernel = _softsign(workspace)
    _place(workspace, kernel, "softsign-bench.json", "bench")
    _place(workspace, kernel, "softsign-profile.json", "profile")
    _place(workspace, kernel, "tail_bug-test.json", "test")
    uri = open_file(client, kernel)
    titles = await _lens_titles(client, uri)
    assert f"bench: {BENCH}" in titles and f"test: {TAIL}" in titles
    hover = await _hover_on(client, uri, kernel.read_text(), "cutegen_forward")
    assert f"**bench**: {BENCH}" in hover and f"**profile**: {PROFILE}" in hover and f"**test**: {TAIL}" in hover


async def test_joules_per_call_stand_beside_the_time_in_code_lens_and_hover(client, workspace):
    from cutegen.harness.energy import Window, summary

    kernel = _softsign(workspace)
    joules = summary([Window(609.0 + d, 3.17, [1980.0], []) for d in (-3, -1, 0, 1, 4)], period_s=0.02)
    _place(workspace, kernel, "softsign-bench.json", "bench", energy=joules.to_json())
    uri = open_file(client, kernel)
    shown = BENCH.replace("3.17 ms · ", "3.17 ms · 1.93 J/call · ")
    assert f"bench: {shown}" in await _lens_titles(client, uri)
    hover = await _hover_on(client, uri, kernel.read_text(), "cutegen_forward")
    assert f"**bench**: {shown}" in hover
    assert "energy 1.93 J/call [1.92 J–1.94 J] · 609 W · SM 1980 MHz · 5 windows, counter updated every 20 ms" in hover


async def test_a_record_of_another_schema_is_a_note_not_a_crash(client, workspace):
    kernel = _softsign(workspace)
    _place(workspace, kernel, "softsign-bench.json", "bench", schema=SCHEMA_VERSION + 7)
    bad = StateDir(workspace / ".cutegen").latest_record(kernel, "test")
    bad.write_text('{"schema": 2, "kind": "test", "verdict": "pass", "timing": "fast"}')
    uri = open_file(client, kernel)
    titles = await _lens_titles(client, uri)
    assert any(t.startswith("bench: record written by another cutegen version") for t in titles), titles
    hover = await _hover_on(client, uri, kernel.read_text(), "cutegen_forward")
    assert f"schema {SCHEMA_VERSION + 7}" in hover and "unreadable test record" in hover


@pytest.mark.gpu
async def test_a_fresh_bench_on_the_gpu_shows_its_figures_in_the_editor(client, workspace):
    """On the H200: `cutegen bench` from a terminal, then the editor's CodeLens and hover show the same line."""
    import os
    import re
    import subprocess
    import sys

    from cutegen import records

    kernel = _softsign(workspace)
    (workspace / "softsign.py").write_text((ROOT / "examples" / "softsign" / "softsign.py").read_text())
    # The GPU machine's own packages (the carried wheels) stay on the path; the checkout's server comes first.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "cutegen", "bench", str(kernel)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    record = records.latest(workspace / ".cutegen", str(kernel), "bench")  # the workspace root, not the cwd
    assert record is not None and record.verdict == "pass", done.stdout + done.stderr
    summary = record.summary()
    # J/call beside ms/call: the carried nvidia-ml-py reads the H200's energy counter (docs/energy.md)
    assert re.fullmatch(r"pass · [\d.]+ ms · [\d.]+ (J|mJ)/call · [\d.]+× eager · [\d.]+× torch\.compile · "
                        r"\d+ % of HBM peak", summary), summary
    assert record.throughput.gpu == "H200" and record.throughput.ceiling_source == "measured"
    assert done.stdout.splitlines()[0].endswith(summary)  # the CLI printed the same line
    assert "  energy " in done.stdout and " W · SM " in done.stdout  # and the energy in full below it
    uri = open_file(client, kernel)
    assert f"bench: {summary}" in await _lens_titles(client, uri)
    assert f"**bench**: {summary}" in await _hover_on(client, uri, kernel.read_text(), "cutegen_forward")
