"""Documents as the server sees them: URIs and paths, what may be compiled, words under the cursor."""

from __future__ import annotations

import re
from pathlib import Path

from pygls.uris import from_fs_path, to_fs_path

from cutegen.session import is_modelnew

MAX_BYTES = 2 * 1024 * 1024  # larger files are generated code or data, not kernels being edited
CHECKED_SUFFIXES = (".cu",)  # headers are checked through the .cu files that include them
_WORD = re.compile(r"[A-Za-z_]\w*")


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names (resolved), or None for other schemes (untitled buffers...)."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def uri_of(path: str | Path) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def is_checked(path: Path | None) -> bool:
    """`.cu` files, and KernelBench `ModelNew` files (their load_inline CUDA strings; other Python is not ours)."""
    if path is None:
        return False
    return path.suffix in CHECKED_SUFFIXES or (path.suffix == ".py" and path.is_file() and is_modelnew(path))


def unfit(path: Path, text: str | None) -> str | None:
    """Why this file must not be compiled (too large, not UTF-8), or None."""
    try:
        on_disk = path.stat().st_size
    except FileNotFoundError:
        on_disk = 0  # an unsaved buffer: only its text counts
    except OSError as e:
        return f"{path.name} cannot be read: {e.strerror}"
    size = max(on_disk, len(text.encode("utf-8", "surrogatepass")) if text is not None else 0)
    if size > MAX_BYTES:
        return (f"{path.name} is {size / 2**20:.1f} MB; CuTeGen does not compile files over "
                f"{MAX_BYTES // 2**20} MB.")
    if on_disk:
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            return (f"{path.name} is not UTF-8 (byte 0x{data[e.start]:02x} on line {line}); "
                    "CuTeGen checks UTF-8 sources only: save the file as UTF-8.")
    return None


def word_at(lines: list[str], line: int, character: int) -> str | None:
    """The identifier under an LSP position, if any."""
    if not 0 <= line < len(lines):
        return None
    for m in _WORD.finditer(lines[line]):
        if m.start() <= character <= m.end():
            return m.group(0)
    return None
