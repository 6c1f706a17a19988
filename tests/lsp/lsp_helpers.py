"""Helpers for the language-server tests (imported by name: keep the module name unique in tests/)."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.support.server_env import SERVER_ENV  # noqa: F401  (the server's environment: this checkout's engine first)

SERVER_DIR = Path(__file__).resolve().parents[2] / "server"

if str(SERVER_DIR) not in sys.path:  # the unit tests import the package in-process, installed or not
    sys.path.insert(0, str(SERVER_DIR))

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


async def until(condition, timeout: float = 60.0, what: str = "condition"):
    """Wait until `condition()` is truthy; returns its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    text = path.read_text() if text is None else text
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=version, text=text)))
    return uri


def replace_text(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def save(client: LanguageClient, uri: str) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))


def publications(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    return [p for p in client.published if p.uri == uri]


def errors(diagnostics) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Error]


async def execute(client: LanguageClient, command: str, *arguments):
    """workspace/executeCommand, as the editor sends it; the server's answer."""
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command,
                                                                                   arguments=list(arguments)))


async def restore_lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    """The CodeLenses that restore a kept version (the best one's, over the kernel)."""
    found = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    return [lens for lens in found if lens.command.command == "cutegen.server.restoreVersion"]
