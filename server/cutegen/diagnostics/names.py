"""Where the user's code declares a name: what `identifier "x" is undefined` and `"x" has already been declared`
need to say whether the fix is a declaration to add, and whether broken structure could be the cause.

Lexical, not a C++ parser: a name counts as declared on a line where it follows a type-like token (`int n`,
`const float* x`, `auto& t`, a template or function parameter, a `using` or `#define`), read with comments and
string literals blanked so `"scale"` in a dispatch macro's name is no declaration of `scale`.
"""

from __future__ import annotations

import difflib
import re

from cutegen.model import Location

_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINE = re.compile(r"^\s*#\s*define\s+(?P<name>[A-Za-z_]\w*)")
# Words after which a name is an operand, not a declaration.
_NOT_TYPES = {"return", "case", "else", "do", "delete", "new", "throw", "goto", "sizeof", "co_return", "co_yield",
              "decltype", "alignof", "typeid", "if", "while", "for", "switch", "and", "or", "not"}


def code_view(lines: list[str]) -> list[str]:
    """The lines with comments and string/character literals replaced by spaces (same columns)."""
    out, in_comment = [], False
    for raw in lines:
        chars, i = list(raw), 0
        while i < len(raw):
            if in_comment:
                end = raw.find("*/", i)
                stop = len(raw) if end < 0 else end + 2
                chars[i:stop] = " " * (stop - i)
                i, in_comment = stop, end < 0
                continue
            if raw.startswith("//", i):
                chars[i:] = " " * (len(raw) - i)
                break
            if raw.startswith("/*", i):
                in_comment = True
                continue
            if raw[i] in "\"'":
                stop = _literal_end(raw, i)
                chars[i + 1:stop - 1] = " " * max(0, stop - 1 - (i + 1))
                i = stop
                continue
            i += 1
        out.append("".join(chars))
    return out


def _literal_end(raw: str, i: int) -> int:
    j = i + 1
    while j < len(raw):
        if raw[j] == "\\":
            j += 2
            continue
        if raw[j] == raw[i]:
            return j + 1
        j += 1
    return len(raw)


def declaration_lines(name: str, code: list[str]) -> list[int]:
    """1-based lines on which `name` is declared (see the module doc)."""
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    out = []
    for n, text in enumerate(code, 1):
        define = _DEFINE.match(text)
        if define:
            if define["name"] == name:
                out.append(n)
            continue
        if any(_declares(text[: m.start()]) for m in pattern.finditer(text)):
            out.append(n)
    return out


def _declares(before: str) -> bool:
    """`before` (the line up to a name) ends the way a declaration's type does: `int `, `float* `, `float *`,
    `Tensor<E, L> `; not an operator (`a * b`, `n > m`), a member access or a keyword such as `return`."""
    s = before.rstrip()
    if s.endswith(("*", "&")):
        marker = len(s) - len(s.rstrip("*&"))
        core = s[:-marker]
        spaced_before, spaced_after = core != core.rstrip(), before != s
        if spaced_before == spaced_after:  # `a * b` or `a*b`: an operator
            return False
        s = core.rstrip()
    if s.endswith(">"):  # a template type's close, written against its last argument (`vector<int>`)
        return len(s) > 1 and not s[-2].isspace() and not s.endswith(("->", ">>"))
    m = re.search(r"(?<![\w.])([A-Za-z_]\w*)$", s)
    if m is None or s[: m.start()].rstrip().endswith(("::", ".", "->")) and not _qualified_type(s[: m.end()]):
        return False
    return m.group(1) not in _NOT_TYPES


def _qualified_type(s: str) -> bool:
    """`cute::Tensor`, `std::size_t`: a namespace-qualified name (a type), not a member access (`a.b`, `p->b`)."""
    return re.search(r"[A-Za-z_]\w*::[A-Za-z_]\w*$", s) is not None


def declared_names(code: list[str]) -> set[str]:
    """Every name the code declares (for spelling suggestions)."""
    names = set()
    for text in code:
        for m in _WORD.finditer(text):
            if _declares(text[: m.start()]):
                names.add(m.group(0))
    return names


def near_spelling(name: str, code: list[str]) -> str | None:
    """A declared name one typo away (`blokcs` → `blocks`), when there is exactly one good candidate."""
    candidates = sorted(n for n in declared_names(code) if n != name)
    close = difflib.get_close_matches(name, candidates, n=2, cutoff=0.8)
    return close[0] if len(close) == 1 else None


_UNDEFINED = re.compile(r'^identifier "(?P<name>[A-Za-z_]\w*)" is undefined')
_REDECLARED = re.compile(r'^"(?P<name>[A-Za-z_]\w*)" has already been declared')


def explain_names(diagnostics: list, lines) -> list:
    """Says where the names nvcc complains about are declared. `identifier "x" is undefined`: whether the fix is
    a declaration to add (`x` is declared nowhere in the file: said at its first use), a declaration in the wrong
    place (below the use, or in a scope that does not reach it), or a typo. `"x" has already been declared`: the
    line of the first declaration (EDG names it only for functions)."""
    first: dict[tuple[str, str], int] = {}
    for d in diagnostics:
        m = _UNDEFINED.match(d.root)
        if m:
            key = (d.file, m["name"])
            first[key] = min(first.get(key, d.line), d.line)
    for d in diagnostics:
        m = _UNDEFINED.match(d.root)
        if m:
            d.message = f"{d.message}: {_where_declared(m['name'], d.line, first[(d.file, m['name'])], lines(d.file))}"
        m = _REDECLARED.match(d.root)
        if m is None:
            continue
        earlier = [n for n in declaration_lines(m["name"], code_view(lines(d.file))) if n < d.line]
        if earlier:
            d.message = f"{d.message} (first declared at line {earlier[-1]})"
            d.related.append(Location(d.file, earlier[-1], 1, f"`{m['name']}` first declared here"))
    return diagnostics


def _where_declared(name: str, line: int, first_use: int, source: list[str]) -> str:
    code = code_view(source)
    declared = [n for n in declaration_lines(name, code) if n != line]
    if declared:
        below = [n for n in declared if n > line]
        if len(below) == len(declared):
            return f"`{name}` is declared only at line {below[0]}, after this use"
        above = max(n for n in declared if n < line)
        return f"`{name}` is declared at line {above}, in a scope that does not reach here"
    where = "first used here" if line == first_use else f"first used at line {first_use}"
    near = near_spelling(name, code)
    return f"`{name}` is not declared ({where})" + (f"; did you mean `{near}`?" if near else "")
