"""Where a parse error really starts: brace, parenthesis and #if balance read together with the indentation.

nvcc reports a broken structure where parsing finally fails ("expected a ;" at the next function, "expected a
declaration" after a stray brace), often far below the edit that broke it. Code that models and people write is
indented to its structure, so the first brace whose indentation disagrees with the brace it pairs with, a
second `else` for one `if`, or a brace that closes nothing is the place to fix (clang's and rustc's "unclosed
delimiter" help reads indentation the same way). Which defect replaces which nvcc error: localise.py.
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
    # A brace defect changes where a block ends: the indentation of that block, and the line after which the
    # change takes effect. An unclosed block swallows the lines after its last one (scope_line) indented at most
    # scope_indent; an extra or misplaced `}` (at scope_line) ends a block early, leaving the lines after it
    # indented deeper than scope_indent outside it. None for the other kinds.
    scope_indent: int | None = None
    scope_line: int | None = None


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
    if _repeated(lines, o.line):
        return Defect(o.line, o.col, "unclosed", "line repeated on the next line; the `{` it opens is never closed: "
                      "delete one of the two", [(o.line + 1, "the same line again"), *(related or [])], o.indent,
                      _block_end(lines, o))
    end = _block_end(lines, o)
    related = list(related or [])
    if end - o.line > 3:
        return Defect(end, _indent(lines[end - 1]) + 1, "unclosed",
                      f"missing `}}` after this line: the {o.label} of line {o.line} is never closed",
                      [(o.line, f"the {o.label}'s `{{` ({why})"), *related], o.indent, end)
    return Defect(o.line, o.col, "unclosed", f"the `{{` of this {o.label} is never closed: by indentation, a `}}` "
                  f"is missing after line {end}", [(end, f"the block ends here ({why})"), *related], o.indent, end)


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
        scan.defects.append(Defect(n, i + 1, "stray", f"this `{c}` closes nothing: an extra `{c}`?",
                                   scope_indent=-1 if c == "}" else None, scope_line=n if c == "}" else None))
        scan.prev = c
        return
    top = scan.stack[-1]
    if top.char == "{" and c in ")]":
        _close_over_braces(scan, n, c)
        scan.prev = c
        return
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


def _close_over_braces(scan: _Scan, n: int, c: str) -> None:
    """A `)` or `]` while a `{` is open above its partner: those braces are the ones never closed (a pasted
    `if (...) {` inside a macro argument or a lambda passed to a call), not the partner."""
    at = next((k for k in range(len(scan.stack) - 1, -1, -1) if scan.stack[k].char == _PAIRS[c]), None)
    if at is None:  # nothing for it to close: the `)` itself is extra; the braces may still close later
        return
    inside = scan.stack[at + 1:]
    braces = [o for o in inside if o.char == "{"]
    explained = any(d.kind == "unclosed" and d.line >= scan.stack[at].line for d in scan.defects)
    if braces and not explained:
        repeated = next((o for o in braces if _repeated(scan.lines, o.line)), None)
        scan.defects.append(_unclosed(scan, repeated or braces[-1], f"the `{c}` at line {n} closes what is around it"))
    del scan.stack[at:]
    for o in inside:  # parentheses left open inside the braces lose their labels too
        if o.char == "(" and scan.paren_label:
            scan.paren_label.pop()


def _repeated(lines: list[str], line: int) -> bool:
    """Line `line` (1-based) holds code and the next line is the same code: a line pasted twice."""
    return line < len(lines) and bool(_code(lines[line - 1])) and _code(lines[line]) == _code(lines[line - 1])


def _check_indent(scan: _Scan, opener: _Open, n: int, indent: int) -> None:
    """A `}` first on its line pairs with `opener`; their indentations should agree."""
    if indent == opener.indent:
        return
    if indent < opener.indent and any(o.char == "{" and o.indent == indent for o in scan.stack):
        outer = next(o for o in reversed(scan.stack) if o.char == "{" and o.indent == indent)
        scan.defects.append(_unclosed(
            scan, opener,
            f"the `}}` at line {n}, indented as the {outer.label} of line {outer.line}, closes it instead",
            [(n, f"closes the {opener.label}, by its indentation the {outer.label}'s brace")]))
    elif indent > opener.indent and (header := _braceless_header(scan.lines, opener.line, n, indent)):
        scan.defects.append(Defect(
            header, indent + 1, "missing-open",
            f"missing `{{` at the end of this line: the `}}` at line {n}, indented for its block, closes the "
            f"{opener.label} of line {opener.line} instead", [(n, "the `}` meant for this block")], opener.indent,
            header))
    elif indent > opener.indent and scan.last_popped is not None and scan.last_popped.indent == indent:
        scan.defects.append(Defect(
            n, indent + 1, "stray",
            f"extra `}}`: the block of line {scan.last_popped.line} is already closed at line {scan.last_popped_line}",
            [(scan.last_popped_line, "the block is closed here"), (opener.line, f"the {opener.label} it closes")],
            opener.indent, n))


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


def _code(line: str) -> str:
    return line.split("//")[0].strip()
