"""Documents as the server sees them: URIs and paths, what may be compiled, words under the cursor."""

from __future__ import annotations

import re
from pathlib import Path

from pygls.uris import from_fs_path, to_fs_path

from cutegen.files import resolved
from cutegen.session import is_modelnew
from cutegen.session import unfit as unfit  # the typing tier asks it too

# Headers are checked through a .cu that includes them (compile/configuration.py): its compile_commands.json entry,
# or the last one checked; their errors also arrive with each including file's check.
CHECKED_SUFFIXES = (".cu", ".cuh", ".hpp")
_WORD = re.compile(r"[A-Za-z_]\w*")


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names (resolved), or None for other schemes (untitled buffers...)."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return resolved(fs) if fs else None


def uri_of(path: str | Path) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def is_checked(path: Path | None) -> bool:
    """`.cu` files, and KernelBench `ModelNew` files (their load_inline CUDA strings; other Python is not ours)."""
    if path is None:
        return False
    return path.suffix in CHECKED_SUFFIXES or (path.suffix == ".py" and path.is_file() and is_modelnew(path))


def word_at(lines: list[str], line: int, character: int) -> str | None:
    """The identifier under an LSP position, if any."""
    if not 0 <= line < len(lines):
        return None
    for m in _WORD.finditer(lines[line]):
        if m.start() <= character <= m.end():
            return m.group(0)
    return None
