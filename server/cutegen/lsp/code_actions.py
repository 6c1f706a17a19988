"""Code actions: a quick fix on a CuTeGen error only when the agent holds a verified patch for it.

The patch was computed in the background after the diagnostics were published (lsp/agent.py) and
is looked up by the diagnostic's data, so a code action never recompiles or calls the LLM. The
title says how far the patch was verified ("compiled, not run", "correct on 5 trials", ...).
"""

from __future__ import annotations

from lsprotocol import types

from cutegen.lsp import layouts
from cutegen.lsp.command_ids import Command
from cutegen.lsp.convert import contains
from cutegen.model import Severity

APPLY = Command.APPLY_PATCH.value


def _overlaps(r: types.Range, want: types.Range) -> bool:
    return contains(r, want.start) or contains(r, want.end) or contains(want, r.start)


def actions(ls, uri: str, want: types.Range) -> list[types.CodeAction]:
    out = []
    for lsp, d in ls.published.at(uri):
        if d.severity is not Severity.ERROR or not _overlaps(lsp.range, want):
            continue
        stored = ls.agent.patches.verified_for(uri, lsp.data)
        if stored is None:
            continue
        p = stored.proposal
        out.append(types.CodeAction(
            title=f"CuTeGen: apply verified fix ({p.short})",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[lsp],
            is_preferred=True,
            command=types.Command(title=f"Apply the verified fix: {p.label}", command=APPLY,
                                  arguments=[{"id": p.id, "uri": uri, "version": stored.version}]),
        ))
    return out + layouts.layout_code_actions(ls, uri, want)


def register(server) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions(ls, params.text_document.uri, params.range)
