"""Code actions on a CuTeGen error: what works on this machine, best first.

- A verified fix, when the agent holds one (computed in the background after the diagnostics were
  published, lsp/agent.py, and found by the diagnostic's data): a code action never recompiles or
  calls the LLM. The title says how far the patch was verified ("compiled, not run", "correct on 5
  trials", ...).
- Otherwise, the knowledge base's diagnosis, which needs no LLM: `cutegen.server.diagnose` on that
  diagnostic (VS Code shows its Markdown rendered; the hover carries it too).
- Without an LLM, in clients that can open a settings page (VS Code, code-server): "configure an LLM
  for verified fixes", which opens the `cutegen.llm*` settings.

An argument that does not match a parameter of a function declared in the user's own file can be fixed at either
end: the same actions are offered on that parameter (the diagnostic's `signature` data) as on the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.files import resolved
from cutegen.lsp import layouts, versions
from cutegen.lsp.command_ids import Command
from cutegen.lsp.convert import contains, lsp_range
from cutegen.lsp.documents import path_of
from cutegen.model import Diagnostic, Severity

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

APPLY = Command.APPLY_PATCH.value
DIAGNOSE = Command.DIAGNOSE.value
OPEN_SETTINGS = "workbench.action.openSettings"  # VS Code's own command, run by the client
LLM_SETTINGS_QUERY = "cutegen.llm"
SETTINGS_UI_CLIENTS = ("visual studio code", "code-server", "vscodium", "cursor", "windsurf")


def _overlaps(r: types.Range, want: types.Range) -> bool:
    return contains(r, want.start) or contains(r, want.end) or contains(want, r.start)


def signature_range(d: Diagnostic, uri: str) -> types.Range | None:
    """The range of the parameter an argument mismatch is against, when it is declared in this document."""
    sig = d.data.get("signature")
    here = path_of(uri)
    if not sig or here is None or resolved(sig["file"]) != here:
        return None
    return lsp_range(sig["line"], sig["col"], sig.get("end_col"))


def _verified_fix(ls: CuteGenServer, uri: str, lsp: types.Diagnostic, where: str = "") -> types.CodeAction | None:
    stored = ls.agent.patches.verified_for(uri, lsp.data)
    if stored is None:
        return None
    p = stored.proposal
    return types.CodeAction(
        title=f"CuTeGen: apply verified fix ({p.short}){where}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp],
        is_preferred=True,
        command=types.Command(title=f"Apply the verified fix: {p.label}", command=APPLY,
                              arguments=[{"id": p.id, "uri": uri, "version": stored.version}]),
    )


def _has_diagnosis(d) -> bool:
    from cutegen.lsp.hover import knowledge_diagnosis  # the hover's own rule: an exact knowledge-base match

    try:
        return knowledge_diagnosis(d) is not None
    except Exception:  # a broken knowledge base costs the action, never the request
        return False


def _explain(uri: str, lsp: types.Diagnostic, where: str = "") -> types.CodeAction:
    return types.CodeAction(
        title=f"CuTeGen: explain this error{where} (knowledge base)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp],
        command=types.Command(title="Show the knowledge base's diagnosis", command=DIAGNOSE,
                              arguments=[{"uri": uri, "diagnostic": lsp.data}]),
    )


def llm_configured(ls: CuteGenServer) -> bool:
    s = ls.session.settings
    return bool(s.llm_base_url and s.llm_model)


def opens_settings(ls: CuteGenServer) -> bool:
    """Whether the client can run VS Code's settings command (it says so by its name only)."""
    name = ls.client_name or ""
    return any(known in name.lower() for known in SETTINGS_UI_CLIENTS)


def _configure_llm(lsp_diagnostics: list[types.Diagnostic]) -> types.CodeAction:
    return types.CodeAction(
        title="CuTeGen: configure an LLM for verified fixes",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=lsp_diagnostics,
        command=types.Command(title="Open the CuTeGen LLM settings", command=OPEN_SETTINGS,
                              arguments=[LLM_SETTINGS_QUERY]),
    )


def actions(ls: CuteGenServer, uri: str, want: types.Range) -> list[types.CodeAction]:
    fixes, explains, errors = [], [], []
    for lsp, d in ls.published.at(uri):
        if d.severity is not Severity.ERROR:
            continue
        if _overlaps(lsp.range, want):
            where = ""
        elif (sig := signature_range(d, uri)) is not None and _overlaps(sig, want):
            where = f" for the call at line {d.line}, whose argument this parameter rejects"
        else:
            continue
        errors.append(lsp)
        fix = _verified_fix(ls, uri, lsp, where)
        if fix is not None:
            fixes.append(fix)
        elif _has_diagnosis(d):
            explains.append(_explain(uri, lsp, where))
    out = fixes + explains
    if errors and not fixes and not llm_configured(ls) and opens_settings(ls):
        out.append(_configure_llm(errors))
    return out + layouts.layout_code_actions(ls, uri, want) + versions.code_actions(ls, uri, want)


def register(server: CuteGenServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: CuteGenServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions(ls, params.text_document.uri, params.range)
