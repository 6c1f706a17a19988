"""The user's own headers a source includes (quoted includes, followed recursively).

Their contents go into the cache key: editing a header must invalidate the kernels that include it.
CuTe/CUTLASS/system headers are covered by the toolchain fingerprint instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from cutegen.files import resolved

_QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_ANY = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)


def user_headers(text: str, directory: Path, include_dirs: list[Path], limit: int = 200,
                 angled: bool = False) -> list[Path]:
    """`angled`: follow `#include <...>` too (a project's headers on its -I path; compile_commands.py)."""
    found: list[Path] = []
    pending = [(text, directory)]
    pattern = _ANY if angled else _QUOTED
    while pending and len(found) < limit:
        body, here = pending.pop()
        for name in pattern.findall(body):
            path = _resolve(name, [here, *include_dirs])
            if path is None or path in found:
                continue
            found.append(path)
            try:
                pending.append((path.read_text(errors="replace"), path.parent))
            except OSError:
                continue
    return found


def _resolve(name: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        p = resolved(d / name)
        if p.is_file():
            return p
    return None
