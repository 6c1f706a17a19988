"""C++ text as the compiler sees it, for the gate: translation phases 1-3 on raw text (line splices joined,
comments blanked, string, raw-string, character and pp-number tokens kept whole, C++14 digit separators
included), directives of the raw text, and the tokens of a preprocessed file (the build's host `gcc -E`) that come
from the main file, by its line markers.

The preprocessor itself is the real one (the build's flags); this module only reads what it wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PREFIX = r"(?:u8|u|U|L)?"
_TOKEN = re.compile(
    rf"(?P<raw>{_PREFIX}R\"(?P<delim>[^()\\\s\"]{{0,16}})\((?s:.*?)\)(?P=delim)\")"
    rf"|(?P<str>{_PREFIX}\"(?:\\.|[^\"\\\n])*\"?)"
    rf"|(?P<chr>{_PREFIX}'(?:\\.|[^'\\\n])*'?)"
    r"|(?P<num>\.?\d(?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)"
    r"|(?P<id>(?:[A-Za-z_$]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|[^\x00-\x7f])(?:[\w$]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|[^\x00-\x7f])*)"
    r"|(?P<punct>::|->|\[\[|\]\]|##|<<=|>>=|\.\.\.|[-+*/%&|^!=<>]=|&&|\|\||<<|>>|\+\+|--|\S)"
)
_MARKER = re.compile(r'^#\s*(\d+)\s+"((?:\\.|[^"\\])*)"((?:\s+\d)*)\s*$')


@dataclass(frozen=True)
class Token:
    kind: str  # "id", "str", "raw", "chr", "num", "punct"
    text: str
    line: int  # 1-based line of the main file


def tokens(code: str, first_line: int = 1) -> list[Token]:
    """Tokens of code without comments (see `phase3`); `first_line` numbers its first line."""
    out, line, pos = [], first_line, 0
    for m in _TOKEN.finditer(code):
        line += code.count("\n", pos, m.start())
        pos = m.start()
        kind = m.lastgroup or ""  # every alternative of _TOKEN is a named group
        out.append(Token(kind if kind != "delim" else "raw", m.group(), line))
    return out


def phase3(text: str) -> str:
    """Line splices joined and comments replaced by a space, the line count kept (a spliced line's newline
    moves to the end of the joined line), so token lines still match the file's."""
    joined, pending = [], 0
    for part in re.split(r"(\\[ \t]*\n)", text):
        if part.startswith("\\") and part.endswith("\n"):
            pending += 1
            continue
        if pending and "\n" in part:
            head, _, tail = part.partition("\n")
            part = head + "\n" * (pending + 1) + tail
            pending = 0
        joined.append(part)
    return _blank_comments("".join(joined) + "\n" * pending)


_COMMENT_OR_TOKEN = re.compile(r"(?P<comment>//[^\n]*|/\*(?s:.*?)(?:\*/|\Z))|" + _TOKEN.pattern)


def _blank_comments(text: str) -> str:
    """Whole tokens are stepped over, so `"//"`, `R"(/*)"` and `1'0'` are not mistaken for comments or
    character literals."""
    out, pos = [], 0
    for m in _COMMENT_OR_TOKEN.finditer(text):
        if m.lastgroup == "comment":
            out.append(text[pos:m.start()])
            out.append(" " + "\n" * m.group().count("\n"))
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


@dataclass(frozen=True)
class Directive:
    name: str  # "include", "line", "pragma", "define", ...
    rest: str  # what follows the name, comments removed
    line: int


def directives(text: str) -> list[Directive]:
    """The preprocessor directives of raw source text, after phases 1-3 (a `#inc\\<newline>lude` is found)."""
    out = []
    for i, line in enumerate(phase3(text).split("\n"), 1):
        m = re.match(r"[ \t]*#[ \t]*([A-Za-z_]\w*)[ \t]*(.*)", line)
        if m:
            out.append(Directive(m.group(1), m.group(2).strip(), i))
    return out


@dataclass
class Preprocessed:
    """What of a preprocessed file came from its main file: tokens, pragmas and the files it included."""

    tokens: list[Token]
    pragmas: list[tuple[str, int]]  # (text after `#pragma`, line)
    includes: list[tuple[str, int]]  # (the path the preprocessor opened, the line of the #include)


def main_file(preprocessed: str) -> Preprocessed:
    """Line markers (`# N "file" flags`, flag 1 entering an include, 2 returning) say where each line came
    from. The main file starts at the first depth-0 marker that names it again after the compiler's prelude
    (<built-in>, <command-line> and its -include files); from then on depth 0 is the main file whatever name a
    marker gives it: a `#line N "/usr/include/x.h"` in the candidate renames, it does not push."""
    result = Preprocessed([], [], [])
    head = preprocessed.split("\n", 3)
    first = _MARKER.match(head[0])
    name = first.group(2) if first else None
    in_prelude = any('"<built-in>"' in h for h in head[1:3])  # GCC's: main, <built-in>, <command-line>, ...
    depth, started, line = 0, False, 1
    block: list[str] = []
    block_line = 1

    def flush() -> None:
        if block:
            result.tokens.extend(tokens("\n".join(block), block_line))
            block.clear()

    for raw in preprocessed.split("\n"):
        m = _MARKER.match(raw)
        if m:
            flush()
            flags = m.group(3).split()
            if "1" in flags:
                if depth == 0 and started:
                    result.includes.append((_unescape(m.group(2)), line))
                depth += 1
            elif "2" in flags:
                depth = max(0, depth - 1)
            elif depth == 0 and m.group(2) == "<command-line>":
                in_prelude = False  # the next marker naming the main file starts it
            elif depth == 0 and m.group(2) == name and not in_prelude:
                started = True
            line = block_line = int(m.group(1))
            continue
        if depth == 0 and started:
            stripped = raw.lstrip()
            if stripped.startswith("#"):  # a #pragma the preprocessor passed through
                flush()
                result.pragmas.append((re.sub(r"^#\s*pragma\s*", "", stripped), line))
            else:
                if not block:
                    block_line = line
                block.append(raw)
        line += 1
    flush()
    return result


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", r"\1", name)
