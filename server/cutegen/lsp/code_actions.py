"""Code actions: a quick fix per CuTeGen error under the cursor, carrying the diagnostic's data
(root, api, bindings, header) so the fix command starts without a recompile."""

from __future__ import annotations

from lsprotocol import types

from cutegen.lsp.convert import contains
from cutegen.model import Severity


def _overlaps(r: types.Range, want: types.Range) -> bool:
    return contains(r, want.start) or contains(r, want.end) or contains(want, r.start)


def actions(ls, uri: str, want: types.Range) -> list[types.CodeAction]:
    out = []
    for lsp, d in ls.published.at(uri):
        if d.severity is not Severity.ERROR or not _overlaps(lsp.range, want):
            continue
        out.append(types.CodeAction(
            title=f"CuTeGen: fix “{(d.root or d.message)[:60]}” with the agent",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[lsp],
            command=types.Command(title="Fix with the agent", command="cutegen.server.fix",
                                  arguments=[uri, lsp.data]),
        ))
    return out


def register(server) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions(ls, params.text_document.uri, params.range)
