"""Finds the declarations in a CUDA file whose types a probe build can ask the compiler for.

Not a C++ parser: a tokenizer and a scope walker that recognise the statements kernels are made of
(`Tensor tAgA = ...;`, `TiledMma mma;`, `auto t = ...;`, `using SmemLayoutA = ...;`). Each declaration
found directly in a function body (or a `using` alias at namespace scope) gets a probe inserted right
after its `;` on the same line, so the shadow copy keeps every line number. A declaration that this
scanner gets wrong costs nothing but a probe error that matches no declaration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Declaration:
    name: str
    line: int  # 1-based line of the name
    col: int  # 1-based column of the name
    end: int  # offset just after the declaration's ';' (where its probe goes)
    alias: bool = False  # `using NAME = TYPE;`: the probe names the type itself
    function: str | None = None  # the function whose body declares it ("gemm_tn"); None at namespace scope


@dataclass(frozen=True)
class _Tok:
    text: str
    start: int
    kind: str  # "id", "num", "str", "punct"


_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<lc>//[^\n]*)|(?P<bc>/\*.*?\*/)|(?P<str>\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')"
    r"|(?P<id>[A-Za-z_]\w*)|(?P<num>\.?\d[\w.']*)|(?P<punct>::|->|&&|\|\||[^\s\w])",
    re.S,
)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_CONTROL = {"if", "for", "while", "switch", "catch"}
_BODY_FIRST = {"else", "do", "try"}
_NOT_A_DECLARATION = {
    "return", "break", "continue", "goto", "throw", "delete", "static_assert", "template", "friend", "typedef",
    "namespace", "asm", "__asm__", "case", "default", "co_return", "co_yield", "new", "sizeof", "this",
}
_TYPE_WORDS = {
    "const", "constexpr", "static", "volatile", "auto", "unsigned", "signed", "long", "short", "int", "char",
    "float", "double", "bool", "void", "typename", "__shared__", "__device__", "__constant__", "extern",
    "register", "inline", "thread_local", "struct", "class", "CUTE_STATIC", "__restrict__",
}
_PLAIN_TYPES = {
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t", "uintptr_t",
    "float2", "float4", "int2", "int4", "uint4", "dim3", "cudaError_t", "half", "__half", "__nv_bfloat16",
    "__nv_bfloat162", "std",
}
_KEYWORDS = _NOT_A_DECLARATION | _CONTROL | _BODY_FIRST | _TYPE_WORDS | {"operator", "true", "false", "nullptr"}


def tokenize(text: str) -> list[_Tok]:
    # Preprocessor lines are blanked (same length), so offsets stay those of the original text.
    blanked = _PREPROCESSOR.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    out = []
    for m in _TOKEN.finditer(blanked):
        kind = m.lastgroup or ""  # every alternative of _TOKEN is a named group
        if kind in ("ws", "lc", "bc"):
            continue
        out.append(_Tok(m.group(), m.start(), kind))
    return out


def find_declarations(text: str) -> list[Declaration]:
    toks = tokenize(text)
    walker = _Walker(text, toks)
    walker.block(0, "namespace")
    return walker.found


_NOT_A_FUNCTION = {"__launch_bounds__", "decltype", "noexcept", "alignas", "__attribute__", "__declspec", "sizeof",
                   "requires", "throw"}


def _function_name(head: list[_Tok]) -> str | None:
    """The name a definition's head declares: the identifier before its parameter list (`__launch_bounds__(...)`
    and the like skipped; a `name<args>(` has its arguments stepped over)."""
    depth = 0
    for j, t in enumerate(head):
        if t.text == "(" and depth == 0 and j:
            k = j - 1
            if head[k].text == ">":  # `make<T>(`: back over the template arguments
                d = 0
                while k >= 0:
                    d += {">": 1, "<": -1}.get(head[k].text, 0)
                    if d == 0:
                        break
                    k -= 1
                k -= 1
            if k >= 0 and head[k].kind == "id" and head[k].text not in _NOT_A_FUNCTION | _KEYWORDS:
                return head[k].text
        depth += {"(": 1, ")": -1}.get(t.text, 0)
    return None


class _Walker:
    def __init__(self, text: str, toks: list[_Tok]):
        self.text, self.toks = text, toks
        self.found: list[Declaration] = []
        self.function: str | None = None  # the function whose body is being walked
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # -- scopes -----------------------------------------------------------------------------------

    def block(self, i: int, scope: str) -> int:
        """Statements until the `}` closing this block; returns the index after it."""
        while i < len(self.toks):
            if self.toks[i].text == "}":
                return i + 1
            i = self.statement(i, scope, probe=True)
        return i

    def statement(self, i: int, scope: str, probe: bool) -> int:
        toks = self.toks
        first = toks[i].text
        if first == "{":
            return self.block(i + 1, "function" if scope == "function" else scope)
        if first == ";":
            return i + 1
        if scope == "function":
            if first in _CONTROL:
                j = self._skip_group(i + 1) if i + 1 < len(toks) and toks[i + 1].text == "(" else i + 1
                if first == "if" and j < len(toks) and toks[j].text == "constexpr":
                    j = self._skip_group(j + 1)
                return self._body(j)
            if first in _BODY_FIRST:
                j = self.statement(i + 1, scope, probe=False) if i + 1 < len(toks) else i + 1
                if first == "do" and j < len(toks) and toks[j].text == "while":
                    return self._to_semicolon(j)
                return j
            if first in ("case", "default") or (toks[i].kind == "id" and i + 1 < len(toks) and toks[i + 1].text == ":"):
                j = i
                while j < len(toks) and toks[j].text != ":":
                    j += 1
                return j + 1
        if scope == "function" and toks[i].kind == "id" and i + 1 < len(toks) and toks[i + 1].text in _CONTROL:
            return self.statement(i + 1, scope, probe)  # a loop-pragma macro (CUTE_UNROLL for ...)
        return self._simple(i, scope, probe)

    def _body(self, j: int) -> int:
        """The statement governed by a control header, then an `else` branch if there is one."""
        if j >= len(self.toks):
            return j
        j = self.statement(j, "function", probe=False)
        if j < len(self.toks) and self.toks[j].text == "else":
            j = self.statement(j + 1, "function", probe=False) if j + 1 < len(self.toks) else j + 1
        return j

    def _simple(self, i: int, scope: str, probe: bool) -> int:
        """A statement up to its `;`, or a namespace-scope definition with a body (function, class, namespace)."""
        toks, start = self.toks, i
        # `=` at this level only: a default argument `(..., int s = 0) {` or a template's `<class T = int>`
        # is no initializer, and reading one as such would swallow the function's body and every one after it.
        has_eq = False
        if toks[i].text == "template" and i + 1 < len(toks) and toks[i + 1].text == "<":
            i = self._skip_template_header(i + 1)
        while i < len(toks):
            t = toks[i].text
            if t in "([":
                i = self._skip_group(i)
                continue
            if t == "=" and not (i > start and toks[i - 1].text in ("operator", "=")) and \
                    not (i + 1 < len(toks) and toks[i + 1].text == "="):
                has_eq = True
            if t == ";":
                if probe:
                    self._declaration(start, i, scope)
                return i + 1
            if t == "}":
                return i  # a missing ';' before the block's end: leave the '}' to the block
            if t == "{":
                words = {tok.text for tok in toks[start:i]}
                if scope == "function" or has_eq:
                    i = self._skip_group(i)  # an initializer or a lambda body
                    continue
                if "namespace" in words or ("extern" in words and any(tok.kind == "str" for tok in toks[start:i])):
                    return self.block(i + 1, "namespace")
                if words & {"struct", "class", "union", "enum"} and not any(tok.text == ")" for tok in toks[start:i]):
                    i = self._skip_group(i)  # a class body: its members are not probed
                    continue
                if any(tok.text == ")" for tok in toks[start:i]):
                    outer, self.function = self.function, _function_name(toks[start:i])
                    try:
                        return self.block(i + 1, "function")
                    finally:
                        self.function = outer
                i = self._skip_group(i)
                continue
            i += 1
        return i

    # -- declarations -----------------------------------------------------------------------------

    def _declaration(self, start: int, semi: int, scope: str) -> None:
        toks = self.toks[start:semi]
        if not toks or toks[0].text in _NOT_A_DECLARATION:
            return
        end = self.toks[semi].start + 1
        if toks[0].text == "using":
            if len(toks) > 2 and toks[1].kind == "id" and toks[2].text == "=" and toks[1].text != "namespace":
                self._add(toks[1], end, alias=True)
            return
        if toks[0].text in ("struct", "class", "union", "enum"):
            return  # a class definition (its members are not probed)
        name = self._declarator(toks, scope)
        if name is not None:
            self._add(name, end)

    def _declarator(self, toks: list[_Tok], scope: str) -> _Tok | None:
        """The declared name if `toks` read as `TYPE NAME [= ...| {...} | (...) | [...]]`."""
        j, before = 0, []  # `before`: the tokens of the type, in order
        while j < len(toks) and toks[j].text not in ("=", "{", "(", "["):
            t = toks[j]
            if t.text == "<":
                j = self._skip_angles(toks, j)
                before.append(t)
                continue
            if t.text == "decltype" and j + 1 < len(toks) and toks[j + 1].text == "(":
                depth, j = 0, j + 1
                while j < len(toks):
                    depth += {"(": 1, ")": -1}.get(toks[j].text, 0)
                    j += 1
                    if depth == 0:
                        break
                before.append(t)
                continue
            if t.kind != "id" and t.text not in ("::", "*", "&", "&&"):
                return None  # an operator: an expression, not a declaration
            before.append(t)
            j += 1
        if len(before) < 2:
            return None
        name, type_part = before[-1], before[:-1]
        if name.kind != "id" or name.text in _KEYWORDS or type_part[-1].text == "::":
            return None
        if not any(t.kind == "id" for t in type_part):
            return None
        plain = _PLAIN_TYPES | (_TYPE_WORDS - {"auto", "decltype"})
        if all(t.text in plain for t in type_part if t.kind == "id"):
            return None  # `int i`, `const float x`: no CuTe object, no probe
        if j < len(toks) and toks[j].text == "(" and scope != "function":
            return None  # namespace scope: most likely a function declaration
        return name

    @staticmethod
    def _skip_angles(toks: list[_Tok], j: int) -> int:
        depth = 0
        while j < len(toks):
            t = toks[j].text
            if t == "<":
                depth += 1
            elif t == ">":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif t in (";", "{", "="):
                return j
            j += 1
        return j

    def _add(self, tok: _Tok, end: int, alias: bool = False) -> None:
        line = self._line_of(tok.start)
        col = tok.start - self._line_starts[line - 1] + 1
        self.found.append(Declaration(tok.text, line, col, end, alias, self.function))

    def _line_of(self, offset: int) -> int:
        lo, hi = 0, len(self._line_starts)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1

    # -- token helpers ----------------------------------------------------------------------------

    def _skip_group(self, i: int) -> int:
        """From an opening (, [ or {: the index after its match."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = []
        while i < len(self.toks):
            t = self.toks[i].text
            if t in pairs:
                stack.append(pairs[t])
            elif stack and t == stack[-1]:
                stack.pop()
                if not stack:
                    return i + 1
            i += 1
        return i

    def _skip_template_header(self, i: int) -> int:
        """From the `<` after `template`: the index after its `>` (nested `<...>` and groups inside skipped)."""
        depth = 0
        while i < len(self.toks):
            t = self.toks[i].text
            if t in "([{":
                i = self._skip_group(i)
                continue
            depth += {"<": 1, ">": -1}.get(t, 0)
            i += 1
            if depth == 0 or t in (";", "}"):
                return i
        return i

    def _to_semicolon(self, i: int) -> int:
        while i < len(self.toks) and self.toks[i].text != ";":
            i = self._skip_group(i) if self.toks[i].text in "([{" else i + 1
        return i + 1
