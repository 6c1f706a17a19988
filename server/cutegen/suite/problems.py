"""Benchmark problems (KernelBench's format) found in files and folders, and the kernels that answer them.

A KernelBench checkout's `level1/` is a flat folder of `19_ReLU.py`-style files; the project's `examples/` nests
one problem per folder next to its kernel. Both are walked the same way: every `.py` that defines `class Model`,
`get_inputs` and `get_init_inputs` (read as text, never imported here) and no `class ModelNew` is a problem."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cutegen.state import NAME as STATE_NAME

_MODEL = re.compile(r"^class\s+Model\s*\(", re.M)
_MODELNEW = re.compile(r"^class\s+ModelNew\s*\(", re.M)
_FUNCS = (re.compile(r"^def\s+get_inputs\s*\(", re.M), re.compile(r"^def\s+get_init_inputs\s*\(", re.M))
_SKIP_DIRS = {"__pycache__", STATE_NAME, ".git", "node_modules"}


@dataclass(frozen=True)
class Entry:
    """One problem of the run; `kernel` is the file judged for it (None: none found, or the agent writes one)."""

    name: str
    problem: Path
    kernel: Path | None = None


def discover(paths: list[Path]) -> list[Entry]:
    """Problems under `paths` (files or folders, walked recursively), in a stable order. A problem is named by
    its file's stem; stems found twice (KernelBench's level1/1_*.py and level2/1_*.py) are named folder/stem."""
    files: list[Path] = []
    for root in paths:
        root = Path(root)
        found = [root] if root.is_file() else sorted(p for p in root.rglob("*.py") if not _skipped(p, root))
        files += [f.resolve() for f in found if is_problem(f) and f.resolve() not in files]
    stems = [f.stem for f in files]
    named = {(f.stem if stems.count(f.stem) == 1 else f"{f.parent.name}/{f.stem}"): f for f in files}
    return [Entry(name, path) for name, path in sorted(named.items(), key=lambda kv: _natural(kv[0]))]


def is_problem(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return bool(_MODEL.search(text)) and all(f.search(text) for f in _FUNCS) and not _MODELNEW.search(text)


def is_modelnew(path: Path) -> bool:
    try:
        return bool(_MODELNEW.search(path.read_text(errors="replace")))
    except OSError:
        return False


def match_kernels(entries: list[Entry], kernels: Path) -> list[Entry]:
    """Each problem paired with `NAME.cu` (the kernel ABI) or a `NAME.py` ModelNew file found under `kernels`;
    `NAME_ref.py` problems (the ModelNew convention) also match `NAME.*`."""
    by_stem: dict[str, list[Path]] = {}
    for f in sorted(Path(kernels).rglob("*")):
        if f.suffix in (".cu", ".py") and not _skipped(f, Path(kernels)):
            by_stem.setdefault(f.stem, []).append(f.resolve())
    out = []
    for e in entries:
        out.append(Entry(e.name, e.problem, _kernel_for(e, by_stem)))
    return out


def _kernel_for(entry: Entry, by_stem: dict[str, list[Path]]) -> Path | None:
    stem = entry.problem.stem
    stems = [stem] + ([stem.removesuffix("_ref")] if stem.endswith("_ref") else [])
    for stem in stems:
        candidates = by_stem.get(stem, [])
        for f in candidates:
            if f.suffix == ".cu":
                return f
        for f in candidates:
            if f.suffix == ".py" and f != entry.problem and is_modelnew(f):
                return f
    return None


def _skipped(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts if path.is_relative_to(root) else path.parts
    return any(p in _SKIP_DIRS or p.startswith(".") for p in parts[:-1])


def _natural(name: str) -> tuple:
    """`2_x` before `10_x`: KernelBench numbers its problems."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
