"""Where a parse error really starts: brace, parenthesis and #if balance read together with the indentation.

nvcc reports a broken structure where parsing finally fails ("expected a ;" at the next function, "expected a
declaration" after a stray brace), often far below the edit that broke it. Code that models and people write is
indented to its structure, so the first brace whose indentation disagrees with the brace it pairs with, a
second `else` for one `if`, or a brace that closes nothing is the place to fix (clang's and rustc's "unclosed
delimiter" help reads indentation the same way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PAIRS = {"}": "{", ")": "(", "]": "["}
_CONTROL = ("for", "if", "while", "switch")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)")


@dataclass
class Defect:
    line: int
    col: int
    kind: str  # "unclosed", "stray", "duplicate-else", "unclosed-paren", "unterminated-if", "stray-endif"
    message: str
    related: list[tuple[int, str]] = field(default_factory=list)  # (line, what is there)


@dataclass
class _Open:
    char: str
    line: int
    col: int
    indent: int
    label: str  # "for", "if", "else", "function body", "block", ... (for the message)


@dataclass
class _Scan:
    lines: list[str]
    stack: list[_Open] = field(default_factory=list)
    ifs: list[int] = field(default_factory=list)  # lines of open #if directives
    skipping: list[bool] = field(default_factory=list)  # per open #if: inside its #else/#elif part
    defects: list[Defect] = field(default_factory=list)
    prev: str = ""  # the previous significant token
    paren_label: list[str] = field(default_factory=list)  # the identifier before each open '('
    closed_label: str = ""  # the identifier before the last closed '(' (for / if / a function name)
    last_popped: _Open | None = None
    last_popped_line: int = 0
    boundary: bool = True  # the next token starts a statement (after ; { } or a directive)
    stmt_indent: int = 0  # indentation of the line on which the current statement starts
    in_string: str = ""  # a string literal continued onto the next line with a backslash
    opened: int = 0  # braces, counted apart from the stack (which a mismatch can leave unbalanced)
    closed: int = 0


def find_defects(text: str) -> list[Defect]:
    """Structural defects in file order (usually the first is the one to fix)."""
    scan = _Scan(text.splitlines())
    in_comment = False
    for n, raw in enumerate(scan.lines, 1):
        if not in_comment and _directive(scan, n, raw):
            continue
        if scan.skipping and any(scan.skipping):  # count braces in the first branch of an #if only
            continue
        in_comment = _tokens(scan, n, raw, in_comment)
    for o in scan.stack:
        if o.char == "(":
            scan.defects.append(Defect(o.line, o.col, "unclosed-paren", "this `(` is never closed"))
    if scan.stack and scan.stack[-1].char == "{" and not any(d.kind == "unclosed" for d in scan.defects):
        o = _innermost_misindented(scan) or scan.stack[-1]
        scan.defects.append(_unclosed(scan, o, "the file ends first"))
    for line in scan.ifs:
        scan.defects.append(Defect(line, 1, "unterminated-if", "this #if has no #endif"))
    # Indentation only explains a brace count that is off, and only in the direction it is off: balanced
    # code with unusual indentation (macros, #if branches) is not broken.
    net = scan.opened - scan.closed
    keep = {"unclosed": net > 0, "stray": net < 0, "missing-open": net < 0}
    return sorted((d for d in scan.defects if keep.get(d.kind, True)), key=lambda d: d.line)


def _unclosed(scan: _Scan, o: _Open, why: str, related=None) -> Defect:
    """An unclosed `{`, reported where the `}` belongs (by indentation, its block's last line) when that is a few
    lines on, else at the brace itself; a line pasted twice is named as such."""
    lines = scan.lines
    if o.line < len(lines) and _code(lines[o.line]) == _code(lines[o.line - 1]):
        return Defect(o.line, o.col, "unclosed", "line repeated on the next line; the `{` it opens is never closed: "
                      "delete one of the two", [(o.line + 1, "the same line again"), *(related or [])])
    end = _block_end(lines, o)
    related = list(related or [])
    if end - o.line > 3:
        return Defect(end, _indent(lines[end - 1]) + 1, "unclosed",
                      f"missing `}}` after this line: the {o.label} of line {o.line} is never closed",
                      [(o.line, f"the {o.label}'s `{{` ({why})"), *related])
    return Defect(o.line, o.col, "unclosed", f"the `{{` of this {o.label} is never closed: by indentation, a `}}` "
                  f"is missing after line {end}", [(end, f"the block ends here ({why})"), *related])


def _block_end(lines: list[str], o: _Open) -> int:
    """The last line indented deeper than the opener's statement (blank lines and comments do not end it)."""
    end = o.line
    for n in range(o.line + 1, len(lines) + 1):
        text = lines[n - 1]
        if not text.strip() or text.strip().startswith(("//", "#")):
            continue
        if _indent(text) <= o.indent:
            break
        end = n
    return end


def _innermost_misindented(scan: _Scan) -> _Open | None:
    """At end of file: the open brace whose block's indentation stops before the file does."""
    for o in reversed(scan.stack):
        if o.char == "{":
            return o
    return None


def _directive(scan: _Scan, n: int, raw: str) -> bool:
    m = _DIRECTIVE.match(raw)
    if not m and not (n > 1 and scan.lines[n - 2].rstrip().endswith("\\") and _in_directive(scan, n - 1)):
        return False
    word = m.group(1) if m else ""
    if word in ("if", "ifdef", "ifndef"):
        scan.ifs.append(n)
        scan.skipping.append(False)
    elif word in ("else", "elif", "elifdef", "elifndef"):
        if scan.skipping:
            scan.skipping[-1] = True
    elif word == "endif":
        if scan.ifs:
            scan.ifs.pop()
            scan.skipping.pop()
        else:
            scan.defects.append(Defect(n, 1, "stray-endif", "this #endif has no #if"))
    return True


def _in_directive(scan: _Scan, n: int) -> bool:
    """Line n (1-based) is part of a preprocessor directive (a #define continued with backslashes)."""
    while n >= 1:
        if _DIRECTIVE.match(scan.lines[n - 1]):
            return True
        if n < 2 or not scan.lines[n - 2].rstrip().endswith("\\"):
            return False
        n -= 1
    return False


def _tokens(scan: _Scan, n: int, raw: str, in_comment: bool) -> bool:
    """Feeds the significant tokens of one line to the scan; returns whether a /* comment is still open."""
    i, length = 0, len(raw)
    if scan.in_string:
        i, scan.in_string = _skip_literal(raw, -1, scan.in_string), ""
        if i >= length and raw.endswith("\\"):
            scan.in_string = '"'
    while i < length:
        if in_comment:
            end = raw.find("*/", i)
            if end < 0:
                return True
            i, in_comment = end + 2, False
            continue
        c = raw[i]
        if raw.startswith("//", i):
            break
        if raw.startswith("/*", i):
            in_comment, i = True, i + 2
            continue
        if c in "\"'":
            _statement(scan, n)
            i = _skip_literal(raw, i, c)
            if i >= length and raw.endswith("\\"):
                scan.in_string = c
            scan.prev = "literal"
            continue
        if not c.isspace() and c not in "})":
            _statement(scan, n)
        ident = _IDENT.match(raw, i)
        if ident:
            _word(scan, n, ident.group(0))
            i = ident.end()
            continue
        if c in "{([":
            scan.opened += c == "{"
            _open(scan, n, i, c)
        elif c in "})]":
            scan.closed += c == "}"
            _close(scan, n, i, c)
        elif not c.isspace():
            scan.prev = c
            if c == ";" and not any(o.char == "(" for o in scan.stack):
                scan.boundary = True
        i += 1
    return in_comment


def _statement(scan: _Scan, n: int) -> None:
    if scan.boundary:
        scan.stmt_indent, scan.boundary = _indent(scan.lines[n - 1]), False


def _skip_literal(raw: str, i: int, quote: str) -> int:
    """The index after the literal whose opening quote is at i (i = -1: continued from the line before)."""
    j = i + 1
    while j < len(raw):
        if raw[j] == "\\":
            j += 2
            continue
        if raw[j] == quote:
            return j + 1
        j += 1
    return j


def _word(scan: _Scan, n: int, word: str) -> None:
    if word == "else" and scan.prev == "}" and scan.last_popped and scan.last_popped.label == "else" \
            and scan.last_popped_line == n:
        first = scan.last_popped
        scan.defects.append(Defect(
            n, _indent(scan.lines[n - 1]) + 1, "duplicate-else",
            f"a second `else` for one `if` (the first at line {first.line}): delete one",
            [(first.line, "the first else")]))
    scan.prev = word


def _open(scan: _Scan, n: int, i: int, c: str) -> None:
    label = "block"
    if c == "(":
        scan.paren_label.append(scan.prev)
    elif c == "{":
        if scan.prev == ")":
            label = scan.closed_label if scan.closed_label in _CONTROL else (
                "function body" if not any(o.char == "{" for o in scan.stack) else "block")
        elif scan.prev in ("else", "do", "try"):
            label = scan.prev
        elif scan.prev in ("]", "mutable"):
            label = "lambda"
        elif scan.prev == "const":
            label = "function body"
    scan.stack.append(_Open(c, n, i + 1, scan.stmt_indent, label))
    scan.prev = c
    if c == "{":
        scan.boundary = True


def _close(scan: _Scan, n: int, i: int, c: str) -> None:
    line = scan.lines[n - 1]
    first_on_line = line[:i].strip() == ""
    if c == ")":
        scan.closed_label = scan.paren_label.pop() if scan.paren_label else ""
    if not scan.stack:
        scan.defects.append(Defect(n, i + 1, "stray", f"this `{c}` closes nothing: an extra `{c}`?"))
        scan.prev = c
        return
    top = scan.stack[-1]
    if top.char != _PAIRS[c]:
        if c == "}" and top.char == "(":  # a '(' left open inside a block
            scan.defects.append(Defect(top.line, top.col, "unclosed-paren",
                                       f"this `(` is never closed: the block ends at line {n} first",
                                       [(n, "the block ends here")]))
            while scan.stack and scan.stack[-1].char != "{":
                scan.stack.pop()
                if scan.paren_label:
                    scan.paren_label.pop()
            if not scan.stack:
                return
            top = scan.stack[-1]
        else:
            scan.prev = c
            return
    scan.stack.pop()
    if c == "}" and first_on_line and not scan.defects:
        _check_indent(scan, top, n, _indent(line))
    scan.last_popped, scan.last_popped_line = (top, n) if c == "}" else (scan.last_popped, scan.last_popped_line)
    scan.prev = c
    if c == "}":
        scan.boundary = True


def _check_indent(scan: _Scan, opener: _Open, n: int, indent: int) -> None:
    """A `}` first on its line pairs with `opener`; their indentations should agree."""
    if indent == opener.indent:
        return
    if indent < opener.indent and any(o.char == "{" and o.indent == indent for o in scan.stack):
        outer = next(o for o in reversed(scan.stack) if o.char == "{" and o.indent == indent)
        scan.defects.append(_unclosed(
            scan, opener, f"the `}}` at line {n}, indented as the {outer.label} of line {outer.line}, closes it instead",
            [(n, f"closes the {opener.label}, by its indentation the {outer.label}'s brace")]))
    elif indent > opener.indent and (header := _braceless_header(scan.lines, opener.line, n, indent)):
        scan.defects.append(Defect(
            header, indent + 1, "missing-open",
            f"missing `{{` at the end of this line: the `}}` at line {n}, indented for its block, closes the "
            f"{opener.label} of line {opener.line} instead", [(n, "the `}` meant for this block")]))
    elif indent > opener.indent and scan.last_popped is not None and scan.last_popped.indent == indent:
        scan.defects.append(Defect(
            n, indent + 1, "stray",
            f"extra `}}`: the block of line {scan.last_popped.line} is already closed at line {scan.last_popped_line}",
            [(scan.last_popped_line, "the block is closed here"), (opener.line, f"the {opener.label} it closes")]))


def _braceless_header(lines: list[str], start: int, n: int, indent: int) -> int | None:
    """The nearest `if (...)` / `for (...)` / `else` line above n, indented like the `}` at n, that opens no
    block (its `{` was deleted)."""
    for k in range(n - 1, start, -1):
        code = _code(lines[k - 1])
        if not code:
            continue
        if _indent(lines[k - 1]) < indent:
            return None
        if _indent(lines[k - 1]) == indent:
            head = re.match(r"(?:\}\s*)?(?:else\b|(?:if|for|while|switch)\s*\()", code)
            return k if head and not code.endswith(("{", ";")) else None
    return None


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


# What EDG (and clang) say where a broken structure finally stops the parse.
_PARSE_ERROR = re.compile(
    r'^(?:expected (?:a|an) |At end of source|this declaration has no storage class|identifier "[^"]+" is undefined'
    r'|a function-definition is not allowed|unrecognized token|extra text after|function "[^"]+" has already been '
    r'defined|"[^"]+" has already been declared|local function definitions|a return statement|this #\w+ directive'
    r'|the #if for this directive|#endif without #if|#else without #if|missing closing'
    r'|linkage specification is not allowed|a template declaration is not allowed|a namespace definition'
    r'|A __global__ function or function template cannot be a member function'
    # clang's words for the same (the type tier, diagnostics/clang_log.py)
    r"|expected '|expected (?:unqualified-id|expression|statement|member name|identifier)|extraneous closing brace"
    r"|function definition is not allowed here|redefinition of '|unterminated conditional directive"
    r"|use of undeclared identifier|kernel function '[^']+' must be a free function)")


def is_parse_error(text: str) -> bool:
    return _PARSE_ERROR.match(text) is not None


def localise(diagnostics: list, main_file: str, source: list[str]) -> list:
    """When the first error in the user's file is a parse error and the file's structure is broken before it,
    the structural defect becomes the first diagnostic (nvcc's parse errors its related places)."""
    from cutegen.model import Diagnostic, Location, Severity

    mine = [d for d in diagnostics if d.severity is Severity.ERROR and d.file == main_file]
    if not mine or not is_parse_error(mine[0].root):
        return diagnostics
    at_end = any("at end of source" in d.root for d in mine)  # then the defect may lie anywhere
    last = len(source) if at_end else max(d.line for d in mine)
    defect = next((x for x in find_defects("\n".join(source)) if x.line <= last), None)
    if defect is None:
        return diagnostics
    if defect.kind == "unclosed-paren" and mine[0].root in ('expected a ")"', "expected ')'"):  # EDG's, clang's
        # nvcc is right where the `)` goes; the `(` it would close is the useful extra fact.
        if defect.line != mine[0].line:
            mine[0].related.append(Location(main_file, defect.line, defect.col, "the `(` that is never closed"))
        return diagnostics
    follow = [d for d in mine if is_parse_error(d.root) and (d.line >= defect.line or "at end of source" in d.root)]
    text = source[defect.line - 1] if 0 < defect.line <= len(source) else ""
    related = [Location(main_file, line, 1, what) for line, what in defect.related]
    related += [Location(main_file, d.line, d.col, f"nvcc reports: {d.message}") for d in follow]
    same = next((d for d in follow if d.line == defect.line), None)  # nvcc's words where it found the place too
    message = f"{same.message}: {defect.message}" if same else defect.message
    found = Diagnostic(file=main_file, line=defect.line, col=defect.col, end_col=max(defect.col + 1, len(text) + 1),
                       severity=Severity.ERROR, message=message, code=f"structure-{defect.kind}",
                       root=defect.message, related=related,
                       explanation=_explain(defect, follow),
                       data={"nvcc": [d.format() for d in follow]})
    rest = [d for d in diagnostics if not any(d is f for f in follow)]
    return [found, *rest]


def _explain(defect: Defect, follow: list) -> str:
    md = [f"**{defect.message}**",
          "nvcc stops where the broken structure makes the parse fail, usually below the cause:"]
    md += [f"- line {d.line}: {d.message}" for d in follow[:5]]
    return "\n\n".join(md)


def _code(line: str) -> str:
    return line.split("//")[0].strip()
