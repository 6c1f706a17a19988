"""The server stays up and says what is wrong: bad settings, no nvcc, unfit files, errors, shutdown."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_helpers import open_file, publications, save, until
from lsp_kernels import broken

pytestmark = pytest.mark.asyncio


async def _still_answers(client, uri: str) -> None:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert lenses is not None
    with pytest.raises(JsonRpcException, match="arguments: missing"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="cutegen.server.check", arguments=[]))


def _shown(client, kind: types.MessageType) -> list[str]:
    return [m.message for m in client.messages if m.type == kind]


@pytest.mark.cutegen_settings({"debounceMs": "fast", "checkOnType": "yes", "nvcc": 42})
async def test_bad_settings_warn_once_and_are_pulled_again(client, workspace):
    warning = await until(lambda: _shown(client, types.MessageType.Warning), 10, "a settings warning")
    assert len(warning) == 1
    for name in ("cutegen.debounceMs", "cutegen.checkOnType", "cutegen.nvcc"):  # as the user wrote them
        assert name in warning[0]
    await _still_answers(client, (workspace / "k.cu").as_uri())

    client.set_configuration({"cutegen": {"checkTimeout": -1}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(lambda: len(_shown(client, types.MessageType.Warning)) == 2, 10, "a warning for the new value")
    assert "cutegen.checkTimeout" in _shown(client, types.MessageType.Warning)[1]


@pytest.mark.cutegen_settings({"nvcc": "/nonexistent/bin/nvcc"})
async def test_missing_nvcc_is_reported_once(client, workspace):
    path = workspace / "k.cu"
    path.write_text(broken("no-nvcc"))
    uri = open_file(client, path)
    for _ in range(3):
        save(client, uri)
    await until(lambda: _shown(client, types.MessageType.Error), 10, "the toolchain error")
    await asyncio.sleep(1.0)  # the later saves had their chance to repeat it
    (error,) = _shown(client, types.MessageType.Error)
    assert "nvcc not found at '/nonexistent/bin/nvcc'" in error
    assert publications(client, uri) == []
    await _still_answers(client, uri)


async def test_non_utf8_file_is_not_compiled(client, workspace):
    path = workspace / "latin1.cu"
    path.write_bytes("// caf\u00e9 kernel\n__global__ void k() {}\n".encode("latin-1"))
    uri = open_file(client, path, text=path.read_bytes().decode("latin-1"))
    (published,) = await until(lambda: publications(client, uri), 10, "the encoding diagnostic")
    (diagnostic,) = published.diagnostics
    assert "not UTF-8" in diagnostic.message and "line 1" in diagnostic.message
    assert diagnostic.range.start.line == 0


async def test_huge_file_is_not_compiled(client, workspace):
    path = workspace / "huge.cu"
    path.write_text("// filler\n" * 300_000)  # 3 MB
    uri = open_file(client, path)
    (published,) = await until(lambda: publications(client, uri), 10, "the size diagnostic")
    (diagnostic,) = published.diagnostics
    assert "does not compile files over 2 MB" in diagnostic.message
    # Closing the file withdraws its diagnostics.
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    await until(lambda: len(publications(client, uri)) == 2, 10, "the diagnostics to be withdrawn")
    assert list(publications(client, uri)[-1].diagnostics) == []


async def test_a_folder_named_like_a_kernel_is_named_and_the_server_stays_up(client, workspace):
    # Reading it raises: once an internal error with a traceback, now the one rule of build/fitness.py says why.
    (workspace / "folder.cu").mkdir()
    uri = open_file(client, workspace / "folder.cu", text="")
    await until(lambda: client.diagnostics.get(uri), 30, "the folder's diagnostic")
    (d,) = client.diagnostics[uri]
    assert d.message == "folder.cu cannot be read: Is a directory" and d.severity == types.DiagnosticSeverity.Warning
    assert not [m for m in client.log_messages if "Traceback" in m.message]
    await _still_answers(client, uri)


async def test_requests_after_shutdown_get_an_error(client, workspace):
    await client.shutdown_async(None)
    with pytest.raises(JsonRpcException, match="shutting down"):
        await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "k.cu").as_uri()),
            position=types.Position(line=0, character=0))), 5)
    client.exit(None)
