"""Broken structure in place of the parse errors it causes, and only of those.

nvcc's first error in the user's file stays where it is unless the file's structure explains it:
- a syntax error (`expected a ";"`, `At end of source`, `a function-definition is not allowed here`, ...) is what
  a broken brace, parenthesis or `#if` produces, so a structural defect at or before it (anywhere, for the errors
  that point back at an opener) takes its place and nvcc's words become related places;
- an ordinary semantic error (`identifier "x" is undefined`, `"x" has already been declared`) is taken over only
  on strong evidence. Strong means all of: the defect is a brace that moves scopes (an unclosed block, an extra
  `}`, a deleted `{`: find_defects keeps those only when the file's brace count is off in their direction); the
  error's line is, by its indentation, on the wrong side of that brace (swallowed by the unclosed block, or cut
  out of the block an early `}` ended); and the name's other declaration is on the other side of the defect (the
  broken brace separates a use from its declaration, or merges two scopes that each declare the name; for a
  deleted `{`, the declaration is the braceless header's one statement and the use comes after it). A name
  declared nowhere else in the file is never structure's doing: the fix adds its declaration. Anything less is a
  note on nvcc's error, which stays first.
"""

from __future__ import annotations

import re

from cutegen.diagnostics.names import code_view, declaration_lines
from cutegen.diagnostics.structure import Defect, find_defects
from cutegen.model import Diagnostic, Location, Severity

_SYNTAX = re.compile(
    r'^(?:expected (?:a|an) |At end of source|this declaration has no storage class'
    r'|a function-definition is not allowed|unrecognized token|extra text after|local function definitions'
    r'|a return statement|this #\w+ directive|the #if for this directive|#endif without #if|#else without #if'
    r'|missing closing|linkage specification is not allowed|a template declaration is not allowed'
    r'|a namespace definition|A __global__ function or function template cannot be a member function'
    r'|closing brace of template definition not found'
    # clang's words for the same (the type tier, diagnostics/clang_log.py)
    r"|expected '|expected (?:unqualified-id|expression|statement|member name|identifier)|extraneous closing brace"
    r"|function definition is not allowed here|unterminated conditional directive"
    r"|kernel function '[^']+' must be a free function)")
_SEMANTIC = re.compile(
    r'^(?:identifier "(?P<undefined>[^"]+)" is undefined'
    r'|(?:function |variable )?"(?P<twice>[^"(]+)(?:\([^"]*\))?" has already been (?:declared|defined)'
    r"|use of undeclared identifier '(?P<undefined_clang>[^']+)'|redefinition of '(?P<twice_clang>[^']+)')")
# Errors placed at an opener far above the defect (the `{` to match, the template's first line).
_POINTS_BACK = re.compile(r"at end of source|^closing brace of template definition not found")
_PREVIOUS = re.compile(r"previous (?:definition|declaration) at line (\d+)")
_SCOPE_KINDS = ("unclosed", "stray", "missing-open")


def is_parse_error(text: str) -> bool:
    return _SYNTAX.match(text) is not None or _SEMANTIC.match(text) is not None


def localise(diagnostics: list[Diagnostic], main_file: str, source: list[str]) -> list[Diagnostic]:
    """The structural defect in place of the first parse error it explains (see the module doc)."""
    mine = [d for d in diagnostics if d.severity is Severity.ERROR and d.file == main_file]
    anchors = [d for d in mine if is_parse_error(d.root)]
    if not anchors:
        return diagnostics
    back = any(_POINTS_BACK.search(d.root) for d in mine)  # then the defect may lie anywhere
    defects = find_defects("\n".join(source))
    code = code_view(source)
    for anchor in anchors:
        defect = next((x for x in defects if back or x.line <= anchor.line), None)
        if defect is None:
            continue
        if _SEMANTIC.match(anchor.root) and not strong_evidence(defect, anchor, source, code):
            anchor.related.append(Location(main_file, defect.line, defect.col,
                                           f"the structure may be broken here too: {defect.message}"))
            continue
        return _replace(diagnostics, mine, anchor, defect, main_file, source, code)
    return diagnostics


def strong_evidence(defect: Defect, error: Diagnostic, source: list[str], code: list[str]) -> bool:
    """Whether `defect` accounts for the semantic `error` (the module doc says what counts)."""
    m = _SEMANTIC.match(error.root)
    if m is None or defect.kind not in _SCOPE_KINDS or defect.scope_indent is None or defect.scope_line is None:
        return False
    if not 0 < error.line <= len(source) or not defect.scope_line < error.line:
        return False
    indent = _indent(source[error.line - 1])
    moved = indent <= defect.scope_indent if defect.kind == "unclosed" else indent > defect.scope_indent
    if not moved:
        return False
    undefined = m["undefined"] or m["undefined_clang"]
    name = undefined or m["twice"] or m["twice_clang"]
    others = [n for n in declaration_lines(name, code) if n != error.line]
    if undefined:  # a scope ended too early: the declaration is inside it, the use after its end
        if defect.kind == "missing-open":  # a braceless header: its body, and what it declares, is one statement
            return any(defect.scope_line < n < error.line for n in others)
        return defect.kind == "stray" and any(n < defect.scope_line for n in others)
    # Declared twice: a block left open merged the scope of a declaration inside it with one after it.
    previous = _PREVIOUS.search(error.root)
    first = int(previous.group(1)) if previous else max((n for n in others if n < error.line), default=None)
    return first is not None and first <= defect.scope_line


def _replace(diagnostics, mine, anchor, defect: Defect, main_file: str, source: list[str], code) -> list:
    if defect.kind == "unclosed-paren" and anchor.root in ('expected a ")"', "expected ')'"):  # EDG's, clang's
        # nvcc is right where the `)` goes; the `(` it would close is the useful extra fact.
        if defect.line != anchor.line:
            anchor.related.append(Location(main_file, defect.line, defect.col, "the `(` that is never closed"))
        return diagnostics
    follow = [d for d in mine if d is anchor or _follows(d, defect, source, code)]
    text = source[defect.line - 1] if 0 < defect.line <= len(source) else ""
    related = [Location(main_file, line, 1, what) for line, what in defect.related]
    related += [Location(main_file, d.line, d.col, f"nvcc reports: {d.message}") for d in follow]
    same = next((d for d in follow if d.line == defect.line), None)  # nvcc's words where it found the place too
    message = f"{same.message}: {defect.message}" if same else defect.message
    found = Diagnostic(file=main_file, line=defect.line, col=defect.col, end_col=max(defect.col + 1, len(text) + 1),
                       severity=Severity.ERROR, message=message, code=f"structure-{defect.kind}",
                       root=defect.message, related=related, explanation=_explain(defect, follow),
                       data={"nvcc": [d.format() for d in follow]})
    at = min(i for i, d in enumerate(diagnostics) if any(d is f for f in follow))
    rest = [d for d in diagnostics if not any(d is f for f in follow)]
    before = [d for d in diagnostics[:at] if not any(d is f for f in follow)]
    return [*before, found, *rest[len(before):]]


def _follows(d: Diagnostic, defect: Defect, source: list[str], code: list[str]) -> bool:
    """A later error the defect explains too: a syntax error after it (or one pointing back at an opener), a
    semantic one only on strong evidence."""
    if _SYNTAX.match(d.root):
        return d.line >= defect.line or _POINTS_BACK.search(d.root) is not None
    return _SEMANTIC.match(d.root) is not None and strong_evidence(defect, d, source, code)


def _explain(defect: Defect, follow: list) -> str:
    md = [f"**{defect.message}**",
          "nvcc stops where the broken structure makes the parse fail, usually below the cause:"]
    md += [f"- line {d.line}: {d.message}" for d in follow[:5]]
    return "\n\n".join(md)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
