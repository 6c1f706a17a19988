"""The background loop through the real server (pytest-lsp): after a clean save, test → time → profile without a
command, newest save first, a newer save stopping the older run (its ncu killed), figures marked running… and
stale, a failed verdict at the output's line, a regression with Restore Best one command away.

No GPU here: the server runs with the GPU stand-ins of tests/support/gpu_standin.py (nvidia-smi, the GPU worker,
ncu answering with the H200's captured payloads); nvcc, the records, the loop and pygls are the product's. The
same loop runs on the H200 in test_background_gpu.py. Without a stand-in (the plain `client` fixture) this machine
shows what any machine without a GPU shows.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_helpers import SERVER_ENV, needs_nvcc, open_file, replace_text, save, until

from cutegen import records
from cutegen.lsp.background import LOOP_NOTIFICATION
from tests.support import loop_scenario
from cutegen.state import StateDir

pytestmark = [pytest.mark.asyncio, needs_nvcc]

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "support" / "gpu_standin_bin"
PROBLEM = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return 2 * x
def get_inputs():
    return [torch.rand(1024)]
def get_init_inputs():
    return []
"""
# A plain CUDA kernel (no CuTe): its check and build take seconds, and every version below is a new text.
KERNEL = """// cutegen: problem=scale.py
// standin: {standin}
#include <cutegen/abi.h>

__global__ void scale_kernel(const float* x, float* y, long n) {{
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {{
  const DLTensor& in = inputs[0];
  DLTensor& out = outputs[0];
  long n = cutegen_numel(in);
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(cutegen_data<const float>(in), cutegen_data<float>(out), n);
  return (int)cudaGetLastError();
}}
"""
OUTPUT_LINE = KERNEL.splitlines().index("  DLTensor& out = outputs[0];")  # 0-based


STANDIN_ENV = {**SERVER_ENV, "PYTHONPATH": os.pathsep.join([str(ROOT), SERVER_ENV["PYTHONPATH"]])}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "tests.support.gpu_standin", "lsp"],
                                              server_env=STANDIN_ENV,
                                              client_factory=loop_scenario.recording_client))
async def gpu(lsp_client: LanguageClient, request, workspace: Path):
    """The real server on a machine with the GPU stand-ins; `cutegen_settings` markers add settings."""
    marker = request.node.get_closest_marker("cutegen_settings")
    await loop_scenario.start(lsp_client, workspace, {"ncu": str(BIN / "ncu"), **(marker.args[0] if marker else {})})
    (workspace / "scale.py").write_text(PROBLEM)
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:
        pass


def _kernel(standin: str) -> str:
    return KERNEL.format(standin=standin)


def _events(client, uri: str, **match) -> list[dict]:
    """The loop notifications about `uri` (with these values)."""
    return [e for _, kind, e in client.events
            if kind == "loop" and e["uri"] == uri and all(e.get(k) == v for k, v in match.items())]


def _checks(client, uri: str) -> int:
    return len([p for _, kind, p in client.events if kind == "diagnostics" and p.uri == uri])


async def _lenses(client, uri: str) -> list[str]:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    return [lens.command.title for lens in found]


async def _hover(client, uri: str, text: str) -> str:
    line = next(i for i, l in enumerate(text.splitlines()) if "cutegen_forward(" in l)
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=20)))
    return found.contents.value if found else ""


def _write_and_save(client, path: Path, uri: str, text: str, version: int) -> None:
    path.write_text(text)
    replace_text(client, uri, text, version)
    save(client, uri)


def _latest(workspace: Path, kernel: Path, kind: str):
    return records.latest(StateDir(workspace / ".cutegen"), str(kernel), kind)


async def _saved_and_checked(client, uri: str, saves: int) -> None:
    """Wait for the check of the open, save, wait for the check of the save (the `saves`-th)."""
    published = getattr(client, "published", None)  # the plain client's list, else the recording client's events
    checks = (lambda: len([p for p in published if p.uri == uri])) if published is not None else \
        (lambda: _checks(client, uri))
    await until(lambda: checks() >= saves, 60, "the check before the save")
    save(client, uri)
    await until(lambda: checks() >= saves + 1, 60, "the check of the save")


def _ncu_pids() -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(BIN / "ncu").encode() in (entry / "cmdline").read_bytes():
                out.append(int(entry.name))
        except OSError:
            continue
    return out


async def test_a_clean_save_is_tested_timed_and_profiled_without_a_command(gpu: LanguageClient, workspace):
    """Default settings (no autoTest): the figures of all three stages reach CodeLens, hover and the status
    notification, with one work-done progress; on the old code nothing but the check ran."""
    kernel = workspace / "scale.cu"
    text = _kernel("verdict=pass median_ms=3.1")
    kernel.write_text(text)
    uri = open_file(gpu, kernel)
    save(gpu, uri)
    await until(lambda: _events(gpu, uri, state="idle"), 180, "the background run to end")
    digest = records.text_digest(text)
    test, bench, profile = (_latest(workspace, kernel, kind) for kind in ("test", "bench", "profile"))
    assert [r.source_digest for r in (test, bench, profile)] == [digest] * 3
    assert (test.verdict, bench.verdict, profile.verdict) == ("pass", "pass", "profiled")
    done = [(e["stage"], e["level"]) for e in _events(gpu, uri, state="done")]
    assert done == [("test", "ok"), ("time", "ok"), ("profile", "ok")]
    assert all(e["sinceSave"] > 0 for e in _events(gpu, uri, state="done"))
    titles = await _lenses(gpu, uri)
    assert f"test: {test.summary()}" in titles and f"bench: {bench.summary()}" in titles
    assert f"profile: {profile.summary()}" in titles and "memory-bound" in profile.summary()
    assert bench.summary().startswith("pass · 3.1 ms · 3.39× eager")
    hover = await _hover(gpu, uri, text)
    assert f"**bench**: {bench.summary()}" in hover and f"**profile**: {profile.summary()}" in hover
    begins = [v for values in gpu.progress_reports.values() for v in values
              if isinstance(v, types.WorkDoneProgressBegin) and v.title.startswith("CuTeGen: scale.cu")]
    assert len(begins) == 1 and begins[0].cancellable
    # A save that changes nothing runs nothing.
    await _saved_and_checked(gpu, uri, 1)
    await asyncio.sleep(1.0)
    assert len(_events(gpu, uri, state="idle")) == 1


async def test_three_saves_in_a_row_the_newest_wins(gpu: LanguageClient, workspace):
    """The H200's scenario (tests/support/loop_scenario.py) with the stand-ins: v1's profile is running when v2 is
    saved: ncu dies and no profile of v1 is written. v2's test is in the worker when v3 is saved: it ends (its
    verdict is v2's) and v2 stops there, untimed. v3 runs through, slower than v1: the regression, with Restore
    Best."""
    kernel = workspace / "scale.cu"
    v1, v2, v3 = (_kernel("verdict=pass median_ms=3.1 ncu_s=60"), _kernel("verdict=pass median_ms=2.0 test_s=3"),
                  _kernel("verdict=pass median_ms=4.7"))
    result = await loop_scenario.three_saves(gpu, workspace, 180, texts=[v1, v2, v3], name="scale.cu", problem=PROBLEM)
    uri = kernel.as_uri()
    assert result.ncu_killed_s < 10 and result.ends == ["stopped", "stopped", "idle"]
    rows = {r["version"]: r for r in result.rows}
    # A cached check answers within milliseconds of the save: 0.0 s is a figure, None is a missing one.
    assert all(rows[v]["check"] is not None and rows[v]["verdict"] is not None for v in rows)
    assert rows["v2"].get("timing") is None
    assert rows["v1"].get("profile") is None and rows["v3"]["profile"] > rows["v3"]["timing"] > rows["v3"]["verdict"]
    assert "| v3 |" in loop_scenario.table(result)

    state = StateDir(workspace / ".cutegen")
    digests = {records.text_digest(t): name for t, name in ((v1, "v1"), (v2, "v2"), (v3, "v3"))}
    names = lambda kind: [digests[r.source_digest] for r in reversed(records.history(state, str(kernel), kind))]
    assert names("test") == ["v1", "v2", "v3"]  # v2's test ended at the boundary and counts as v2's
    assert names("bench") == ["v1", "v3"] and names("profile") == ["v3"]  # v1's killed profile wrote nothing

    titles = result.lenses
    bench = _latest(workspace, kernel, "bench")
    assert f"bench: {bench.summary()}" in titles and not any("(stale)" in t or "running" in t for t in titles)
    assert "⚠ slower than the last passing version: 3.1 → 4.7 ms" in titles and "Restore Best" in titles
    idle = _events(gpu, uri, state="idle")[-1]
    assert idle["regression"] == "slower than the last passing version: 3.1 → 4.7 ms" and idle["level"] == "warning"

    # Restore Best offers v1 back (re-verified first), as a patch the editor previews.
    reply = await gpu.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.restoreBest", arguments=[{"uri": uri, "version": 3}]))
    assert reply.get("patch", {}).get("new_text") == v1, reply["message"]


async def test_a_mismatch_after_a_pass_is_a_regression_at_the_output_line(gpu: LanguageClient, workspace):
    kernel = workspace / "scale.cu"
    v1, v2 = _kernel("verdict=pass median_ms=3.1"), _kernel("verdict=mismatch")
    kernel.write_text(v1)
    uri = open_file(gpu, kernel)
    await until(lambda: _events(gpu, uri, state="idle"), 180, "v1's run")
    _write_and_save(gpu, kernel, uri, v2, 2)
    await until(lambda: _events(gpu, uri, state="idle")[1:], 180, "v2's run")
    failed = [d for d in gpu.diagnostics[uri] if d.code == "cutegen-test"]
    assert len(failed) == 1 and failed[0].range.start.line == OUTPUT_LINE
    assert failed[0].message.startswith("test: mismatch · tail (296 of 3,146,024 wrong)")
    idle = _events(gpu, uri, state="idle")[-1]
    assert idle["regression"].startswith("was pass, now mismatch · tail") and idle["level"] == "error"
    assert [(e["stage"], e["level"]) for e in _events(gpu, uri, state="done")][-1] == ("test", "error")
    titles = await _lenses(gpu, uri)
    assert any(t.startswith("⚠ was pass, now mismatch") for t in titles) and "Restore Best" in titles
    hover = await gpu.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=OUTPUT_LINE, character=4)))
    assert "tail" in hover.contents.value.lower() and "mismatch-tail" in hover.contents.value  # the knowledge base
    # An edit marks the figures stale (they were made from the saved text); a fix that is saved withdraws the line.
    replace_text(gpu, uri, v2 + "// edited\n", 3)
    titles = await _lenses(gpu, uri)
    assert any(t.startswith("test (stale): mismatch") for t in titles), titles
    assert "*stale* · mismatch" in await _hover(gpu, uri, v2)
    _write_and_save(gpu, kernel, uri, v1 + "// fixed\n", 4)
    await until(lambda: not [d for d in gpu.diagnostics[uri] if d.code == "cutegen-test"], 60, "the line withdrawn")


async def test_cancel_stops_the_run_now_and_keeps_the_last_profile(gpu: LanguageClient, workspace):
    kernel = workspace / "scale.cu"
    kernel.write_text(_kernel("verdict=pass median_ms=3.1 ncu_s=60"))
    uri = open_file(gpu, kernel)
    running = await until(lambda: _events(gpu, uri, stage="profile", state="running"), 180, "the profile")
    ncu = await until(_ncu_pids, 20, "ncu")
    gpu.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=running[0]["token"]))
    await until(lambda: _events(gpu, uri, state="cancelled"), 20, "the cancelled run")
    assert not any(p in _ncu_pids() for p in ncu)
    assert _latest(workspace, kernel, "profile") is None and _latest(workspace, kernel, "bench").verdict == "pass"
    end = gpu.progress_reports[running[0]["token"]][-1]
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "cancelled"


@pytest.mark.cutegen_settings({"profileAfterTest": False, "testOnSave": True})
async def test_profile_after_test_off(gpu: LanguageClient, workspace):
    kernel = workspace / "scale.cu"
    kernel.write_text(_kernel("verdict=pass median_ms=3.1"))
    uri = open_file(gpu, kernel)
    await until(lambda: _events(gpu, uri, state="idle"), 180, "the run")
    assert [e["stage"] for e in _events(gpu, uri, state="done")] == ["test", "time"]


@pytest.mark.cutegen_settings({"testOnSave": False})
async def test_test_on_save_off(gpu: LanguageClient, workspace):
    kernel = workspace / "scale.cu"
    kernel.write_text(_kernel("verdict=pass"))
    uri = open_file(gpu, kernel)
    await _saved_and_checked(gpu, uri, 1)
    await asyncio.sleep(1.0)
    assert not _events(gpu, uri) and _latest(workspace, kernel, "test") is None


@pytest.mark.skipif(bool(__import__("shutil").which("nvidia-smi")), reason="this machine has a GPU")
async def test_without_a_gpu_it_is_off_and_says_so_once(client: LanguageClient, workspace):
    """The real server, no stand-ins: a paired kernel's saves are checked only, and one line says why."""
    kernel = workspace / "scale.cu"
    kernel.write_text(_kernel("verdict=pass"))
    (workspace / "scale.py").write_text(PROBLEM)
    uri = open_file(client, kernel)
    for n in (1, 2):
        await _saved_and_checked(client, uri, n)
    await until(lambda: [m for m in client.messages if "no GPU" in m.message], 10, "the line")
    await asyncio.sleep(1.0)
    said = [m.message for m in client.messages if "no GPU" in m.message]
    assert said == ["CuTeGen: no GPU: testing on save is off (scale.cu has a problem to test against; tests, "
                    "timings and profiles need an NVIDIA GPU)"]
    assert _latest(workspace, kernel, "test") is None
