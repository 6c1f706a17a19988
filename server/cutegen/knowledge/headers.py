"""CuTe API declarations read from the installed CUTLASS headers, so a prompt or a hover quotes the real
signature of the version the user builds against (not one remembered from another release)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_MAX_DECLS = 3
_MAX_CHARS = 1600
_BAD_BEFORE = re.compile(r"(return|=|\(|\.|->|,|\bnew\b|!|&&|\|\|)\s*$")


@lru_cache(maxsize=4)
def _header_texts(include: str) -> list[tuple[str, list[str]]]:
    root = Path(include)
    files = sorted((root / "cute").rglob("*.hpp"))
    files += sorted(p for p in (root / "cutlass").glob("*.h"))  # a few cutlass top-level helpers
    out = []
    for f in files:
        try:
            out.append((str(f.relative_to(root)), f.read_text(errors="replace").splitlines()))
        except OSError:
            continue
    return out


def find_declarations(include: str | Path, name: str) -> list[tuple[str, int, str]]:
    """(header, line, declaration text) for each definition/declaration of `name` (free or member function),
    cute/ headers first, in header order."""
    name = name.split("::")[-1].strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return []
    call = re.compile(rf"(?<![\w.>:]){re.escape(name)}\s*\(")
    found = []
    for rel, lines in _header_texts(str(include)):
        for i, line in enumerate(lines):
            code = line.split("//")[0]
            if code.lstrip().startswith(("*", "/*")):
                continue  # inside a block comment
            m = call.search(code)
            if not m:
                continue
            before = code[: m.start()]
            if _BAD_BEFORE.search(before) or before.strip().startswith(("#", "static_assert", "CUTE_STATIC_ASSERT")):
                continue
            decl_end = _declaration_end(lines, i, m.end() - 1)
            if decl_end is None:
                continue
            start = _declaration_start(lines, i, before)
            if start is None:
                continue
            text = "\n".join(line.rstrip() for line in lines[start: decl_end + 1])
            text = re.sub(r"\s*\{\s*$", "", text).rstrip()
            found.append((rel, i + 1, text))
    return found


def _declaration_end(lines: list[str], row: int, col: int) -> int | None:
    """The line where the parameter list that opens at (row, col) closes, if what follows makes it a
    declaration (`{`, `const`, `noexcept`, `->`, `;`), else None (a call)."""
    depth, r, c = 0, row, col
    while r < len(lines) and r < row + 30:
        text = lines[r].split("//")[0]
        while c < len(text):
            ch = text[c]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    rest = text[c + 1:].strip()
                    nxt = rest or _next_code(lines, r + 1)
                    if re.match(r"^(\{|const\b|noexcept\b|->|;|&&?\s*\{|volatile\b|override\b)", nxt):
                        return r if rest else r
                    return None
            c += 1
        r, c = r + 1, 0
    return None


def _next_code(lines: list[str], r: int) -> str:
    while r < len(lines):
        s = lines[r].split("//")[0].strip()
        if s:
            return s
        r += 1
    return ""


def _declaration_start(lines: list[str], row: int, before: str) -> int | None:
    """Walk up over the return type, CUTE_HOST_DEVICE and template<...> lines of the declaration."""
    if before.strip() and not re.fullmatch(r"\s*(?:[\w:<>,*&\s]+\s)?", before):
        return None
    start = row
    for r in range(row - 1, max(-1, row - 12), -1):
        s = lines[r].split("//")[0].strip()
        if (not s or s.endswith((";", "}", "{", "*/"))
                or s.startswith(("#", "public", "private", "protected", "*", "/*"))):
            break
        start = r
    # A declaration has a return type somewhere: before the name on its line, or on the lines above.
    header = " ".join(line.strip() for line in lines[start:row]) + " " + before
    if not re.search(r"\b(auto|void|bool|int|decltype|constexpr|CUTE_HOST_DEVICE|CUTE_DEVICE|CUTE_HOST|[A-Z]\w*|"
                     r"static|inline)\b", header):
        return None
    return start


def signature(include: str | Path, name: str) -> str | None:
    decls = find_declarations(include, name)
    if not decls:
        return None
    # Prefer cute/ over cutlass/; keep header order otherwise.
    decls.sort(key=lambda d: (not d[0].startswith("cute/"),))
    parts = []
    for rel, line, text in decls[:_MAX_DECLS]:
        parts.append(f"// {rel}:{line}\n{text}")
    out = "\n\n".join(parts)
    if len(decls) > _MAX_DECLS:
        out += f"\n\n// … {len(decls) - _MAX_DECLS} more overload(s)"
    return out if len(out) <= _MAX_CHARS else out[: _MAX_CHARS - 1] + "…"
