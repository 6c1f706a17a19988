"""Layouts over real LSP (pytest-lsp): hover says "being computed" while the probe runs, then shows the layout
per instantiation; inlay hints follow the setting; the probe never publishes diagnostics."""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from cutegen.lsp.layouts import COMPUTING_TEXT, PICTURE_COMMAND

HERE = Path(__file__).resolve().parent
SERVER = HERE.parents[1] / "server"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SERVER), str(HERE.parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}

pytestmark = [pytest.mark.asyncio, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")]


def _client() -> LanguageClient:
    client = LanguageClient()
    client.published, client.refreshes = {}, 0

    def published(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.published[params.uri] = params.diagnostics

    def refreshed(client: LanguageClient, params):
        client.refreshes += 1

    def ignored(client: LanguageClient, params):
        return None

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: published,
                                   types.WORKSPACE_INLAY_HINT_REFRESH: refreshed,
                                   types.WORKSPACE_CODE_LENS_REFRESH: ignored})
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                              server_env=ENV, client_factory=_client))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.set_configuration({"cutegen": {"layoutInlayHints": "short"}})
    lsp_client.workspace_root = tmp_path
    capabilities = client_capabilities("visual-studio-code")  # captured before VS Code had inlay hints
    capabilities.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    capabilities.text_document.inlay_hint = types.InlayHintClientCapabilities()
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")]))
    yield
    await lsp_client.shutdown_session()


async def _until(condition, timeout=240.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await condition() if asyncio.iscoroutinefunction(condition) else condition()
        if value:
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def _hover(client, uri, line, character):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


async def test_hover_and_inlay_hints_show_layouts(client: LanguageClient):
    path = client.workspace_root / "small_kernel.cu"
    path.write_text((HERE / "small_kernel.cu").read_text())
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())))
    diagnostics = await _until(lambda: client.published.get(uri) is not None and [client.published[uri]],
                               what="the check's diagnostics")
    assert not [d for d in diagnostics[0] if d.severity == types.DiagnosticSeverity.Error]

    # line 10: `auto layout = make_layout(...)` — the probe has only just started
    first = await _hover(client, uri, 9, 8)
    assert first is not None and first.contents.value == COMPUTING_TEXT

    async def ready():
        h = await _hover(client, uri, 9, 8)
        return h if h and "(_64,_4):(_4,_1)" in h.contents.value else None

    hover = await _until(ready, what="the layout on hover")
    assert "[kTile=64] (_64,_4):(_4,_1)" in hover.contents.value
    assert "[kTile=128] (_128,_4):(_4,_1)" in hover.contents.value
    await _until(lambda: client.refreshes, timeout=30, what="an inlay hint refresh")

    # a use of the name further down hovers too (the declaration above it)
    use = await _hover(client, uri, 12, 30)  # `size(layout)` on line 13
    assert use is not None and "CuTe Layout (line 10)" in use.contents.value

    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0))))
    labels = {h.position.line: h.label for h in hints}
    assert labels[7] == "g: gmem float (int):(_1)"
    assert labels[11] == "s: smem float Sw<3,2,3> o _0 o (_8,_32):(_32,_1)"
    assert all(len(label.split(": ", 1)[1]) <= 60 for label in labels.values())  # "short"

    # the "Show layout" picture: a swizzled shared-memory tile with its banks
    picture = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=PICTURE_COMMAND, arguments=[{"uri": uri, "line": 11, "character": 9}]))
    assert picture["kind"] == "Tensor" and picture["svg"].startswith("<svg") and "no bank conflict" in picture["svg"]
    dynamic = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=PICTURE_COMMAND, arguments=[{"uri": uri, "line": 7, "character": 9}]))
    assert "only layouts known at compile time" in dynamic["error"]

    # the probe's own errors never become diagnostics
    assert not [d for d in client.published[uri] if d.severity == types.DiagnosticSeverity.Error]

    # hovers answer from memory: p95 well under 50 ms over real LSP
    times = []
    for _ in range(60):
        t = time.perf_counter()
        await _hover(client, uri, 9, 8)
        times.append(time.perf_counter() - t)
    times.sort()
    p95 = times[int(0.95 * len(times)) - 1]
    print(f"layout hover over LSP: median {1e3 * statistics.median(times):.2f} ms, p95 {1e3 * p95:.2f} ms")
    assert p95 < 0.05
