"""What an editor does when it opens a file, for the tests' LSP clients (tests/conftest.py's `client`)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types


def open_in_editor(client, path: Path, text: str | None = None) -> str:
    """Opens `path` (its text on disk, or `text`) as version 1 and keeps the editor's copy in `client.docs`, which
    the client's applyEdit edits; returns its URI."""
    uri, text = path.as_uri(), path.read_text() if text is None else text
    client.docs[uri] = (1, text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=text)))
    return uri
