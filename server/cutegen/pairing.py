"""Which problem file a kernel file is tested against. It sits below the build and the harness because both ask
it (the check warns when a kernel its problem calls lacks a launcher; a test loads the problem), and it reads
only the kernel's head.
"""

from __future__ import annotations

import re
from pathlib import Path

from cutegen.files import resolved

_DIRECTIVE = re.compile(r"(?://|#)\s*cutegen:\s*problem\s*=\s*(\S+)")  # C++ or Python comment


def find_problem(kernel: Path, explicit: str | Path | None = None) -> Path | None:
    """The problem a kernel is tested against: explicit, else its `// cutegen: problem=` directive
    (relative to the kernel file), else a sibling `.py` with the same stem."""
    if explicit:
        return resolved(explicit)
    try:
        head = kernel.read_text(errors="replace")[:4000]
    except OSError:
        return None
    m = _DIRECTIVE.search(head)
    if m:
        return resolved(kernel.parent / m.group(1))
    sibling = kernel.with_suffix(".py")
    if kernel.suffix == ".py":  # a ModelNew file: its reference is <stem>_ref.py
        sibling = kernel.with_name(f"{kernel.stem}_ref.py")
    return resolved(sibling) if sibling.is_file() else None
