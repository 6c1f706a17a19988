"""The result model in LSP terms. The model is 1-based (as compilers print); LSP is 0-based."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import fields

from lsprotocol import types

from cutegen.files import resolved
from cutegen.lsp.documents import uri_of
from cutegen.model import CheckResult, Diagnostic, Location, Severity

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# Shown by the CodeLens above each kernel; as a diagnostic it would only fill the problems list.
_NOT_PUBLISHED = {"ptxas-resources"}


def lsp_range(line: int, col: int, end_col: int | None = None) -> types.Range:
    start = types.Position(line=max(line - 1, 0), character=max(col - 1, 0))
    end_char = max((end_col or col + 1) - 1, start.character + 1)
    return types.Range(start=start, end=types.Position(line=start.line, character=end_char))


def line_range(line: int) -> types.Range:
    """The whole of a 1-based line: where related locations in headers point."""
    return types.Range(start=types.Position(line=max(line - 1, 0), character=0),
                       end=types.Position(line=max(line, 1), character=0))


def related(loc: Location) -> types.DiagnosticRelatedInformation:
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri_of(loc.file), range=line_range(loc.line)),
        message=loc.message or "related",
    )


def to_lsp(d: Diagnostic) -> types.Diagnostic:
    return types.Diagnostic(
        range=lsp_range(d.line, d.col, d.end_col),
        message=d.message,
        severity=_SEVERITY[d.severity],
        code=d.code,
        source=d.source,
        related_information=[related(r) for r in d.related] or None,
        data=to_data(d),
    )


def to_data(d: Diagnostic) -> dict:
    """Everything a code action needs, so it never recompiles: the model's JSON, with the
    condenser's details (api, bindings, header, ...) also lifted to the top level."""
    return {**d.data, **d.to_json()}


def from_data(data: dict) -> Diagnostic:
    names = {f.name for f in fields(Diagnostic)}
    return Diagnostic.from_json({k: v for k, v in data.items() if k in names})


def by_uri(result: CheckResult, main_uri: str) -> dict[str, list[tuple[types.Diagnostic, Diagnostic]]]:
    """Published diagnostics grouped by the file they are in: the main file (under the URI the client
    used for it) or one of the user's headers."""
    groups: dict[str, list] = defaultdict(list)
    groups[main_uri] = []  # always present: an empty list clears the file
    for d in result.diagnostics:
        if d.code not in _NOT_PUBLISHED:
            uri = main_uri if d.file == result.file else uri_of(resolved(d.file))
            groups[uri].append((to_lsp(d), d))
    return dict(groups)


def contains(r: types.Range, p: types.Position) -> bool:
    after_start = (p.line, p.character) >= (r.start.line, r.start.character)
    before_end = (p.line, p.character) <= (r.end.line, r.end.character)
    return after_start and before_end
