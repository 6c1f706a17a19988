"""Verified patches the editor holds, and the edits that apply one.

Patches live in memory (by id) and are indexed by the diagnostic they fix, so code actions answer from memory
without recompiling or calling the LLM. No protocol I/O here: lsp/agent.py sends the edits.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from cutegen.agent.agent import Proposal


@dataclass
class Stored:
    uri: str
    version: int | None
    proposal: Proposal

    def to_json(self) -> dict:
        p = self.proposal
        return {"uri": self.uri, "version": self.version, "diff": p.diff, "new_text": p.new_text,
                "verified": p.label, "figures": p.figures, "id": p.id, "action": p.action}


def diagnostic_key(data: dict | None) -> tuple:
    data = data or {}
    return (data.get("code"), data.get("line"), data.get("root") or data.get("message"))


class PatchStore:
    def __init__(self) -> None:
        self.by_id: dict[str, Stored] = {}
        self.by_diagnostic: dict[tuple[str, tuple], str] = {}  # (uri, diagnostic key) → newest patch id

    def store(self, uri: str, version: int | None, proposal: Proposal, key: tuple | None = None) -> Stored:
        stored = Stored(uri, version, proposal)
        self.by_id[proposal.id] = stored
        if key is not None:
            self.by_diagnostic[(uri, key)] = proposal.id
        return stored

    def get(self, pid: str) -> Stored | None:
        return self.by_id.get(pid)

    def verified_for(self, uri: str, data: dict | None) -> Stored | None:
        pid = self.by_diagnostic.get((uri, diagnostic_key(data)))
        return self.by_id.get(pid) if pid else None


def replace_edit(uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    """`edits` to one document: versioned (refused by the client if the document moved on) when it can."""
    if not versioned:
        return types.WorkspaceEdit(changes={uri: edits})
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)])


def create_file_edit(uri: str, text: str) -> types.WorkspaceEdit:
    """A new file holding `text`, as one undoable operation (never overwrites)."""
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
    start = types.Position(line=0, character=0)
    return types.WorkspaceEdit(document_changes=[
        types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
        types.TextDocumentEdit(text_document=ident, edits=[
            types.TextEdit(range=types.Range(start=start, end=start), new_text=text)])])


def minimal_edits(old: str, new: str) -> list[types.TextEdit]:
    """Line-level edits that turn `old` into `new`, touching only the changed lines."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        edits.append(types.TextEdit(range=types.Range(start=_pos(a, i1), end=_pos(a, i2)), new_text="".join(b[j1:j2])))
    return edits


def _pos(lines: list[str], i: int) -> types.Position:
    """The start of line `i`, or the end of the text when `i` is past a last line without newline."""
    if i < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return types.Position(line=i, character=0)
    last = lines[-1]
    return types.Position(line=len(lines) - 1, character=len(last.encode("utf-16-le")) // 2)
