"""`.cutegen/`: the one owner of every path under it (build cache, the type tier's precompiled headers, run
records, profiles, agent transcripts and history, shadow copies), and where it lives: at the workspace root,
whether the CLI or the language server asks, so that the editor shows what the terminal ran.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from cutegen.files import resolved

NAME = ".cutegen"
ROOT_MARKERS = (".git", "pyproject.toml", NAME)  # a folder holding one of these is a workspace root
# The default of engine calls made without a workspace (the harness, profiler and sanitizer entry points): relative,
# so it is resolved against the working folder when used, not when the module is imported.
IN_WORKING_FOLDER = Path(NAME)


def under(folder: str | os.PathLike) -> "StateDir":
    """The `.cutegen/` inside `folder` (the suite keeps its own under its output folder)."""
    return StateDir(Path(folder) / NAME)


def workspace_root(path: Path) -> Path:
    """The nearest folder at or above `path` (a file's folder, or a folder) holding `.git`, `pyproject.toml` or an
    existing `.cutegen/`; the file's own folder when none does."""
    path = resolved(path)
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return start


def file_key(file: str | Path) -> str:
    """Readable and collision-free folder name for a source file: its stem plus a short hash of its full path."""
    p = resolved(file)
    return f"{p.stem}-{hashlib.sha1(str(p).encode()).hexdigest()[:8]}"


def stamp() -> str:
    """A sortable time stamp, unique within a process (nanoseconds)."""
    return time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() % 1_000_000_000:09d}"


class StateDir:
    """A `.cutegen/` folder. Behaves as a path (os.fspath, `/`) for code that only passes it on."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = resolved(path)

    @classmethod
    def for_file(cls, file: Path, roots: list[Path] | tuple[Path, ...] = ()) -> "StateDir":
        """The workspace folder (of `roots`, the editor's folders, first match) holding `file`, else the nearest
        workspace root above it (workspace_root)."""
        file = resolved(file)
        for root in roots:
            if file.is_relative_to(resolved(root)):
                return cls(resolved(root) / NAME)
        return cls(workspace_root(file) / NAME)

    def __fspath__(self) -> str:
        return str(self.path)

    def __truediv__(self, other) -> Path:
        return self.path / other

    def __eq__(self, other) -> bool:
        return isinstance(other, StateDir) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"StateDir({str(self.path)!r})"

    # -- the layout --------------------------------------------------------------------------

    @property
    def build_cache(self) -> Path:
        return self.path / "cache"

    @property
    def type_cache(self) -> Path:
        """The type tier's precompiled header sets: `typecheck/<key>.pch` (typecheck/checker.py)."""
        return self.path / "typecheck"

    @property
    def type_results(self) -> Path:
        """What clang said of each parsed text: `typecheck/results/<key>.json` (typecheck/checker.py)."""
        return self.type_cache / "results"

    def runs(self, file: str | Path) -> Path:
        """Run records of one source file: `runs/<stem>-<hash>/`."""
        return self.path / "runs" / file_key(file)

    def latest_record(self, file: str | Path, kind: str) -> Path:
        return self.runs(file) / f"latest-{kind}.json"

    def profile_folder(self, kernel: Path) -> Path:
        """A new folder for one Nsight Compute run (the report, its CSV and text exports)."""
        return self.path / "profiles" / f"{Path(kernel).stem}-{time.strftime('%Y%m%dT%H%M%S')}"

    @property
    def program_record(self) -> str:
        """The name a user's own program's run records are filed under (records.write's `file`): one per state
        dir, so that the editor finds the newest program profile of the workspace again after a restart."""
        return str(self.path / "program")

    def program_report(self, program: str) -> Path:
        """The Nsight Compute report of one run of a user's own program (`cutegen profile -- CMD`)."""
        return self.profile_folder(Path(program)) / "program.ncu-rep"

    def agent(self, kernel: Path) -> Path:
        """Transcripts and the measured history of one kernel: `agent/<stem>-<hash>/`."""
        return self.path / "agent" / file_key(kernel)

    @property
    def llm_endpoints(self) -> Path:
        """What each LLM endpoint + model refused (max_tokens, temperature, ...) or needs (streaming), learned from
        its own answers (agent/endpoint.py)."""
        return self.path / "llm-endpoints.json"

    @property
    def layouts(self) -> Path:
        """Layout probe builds and their results, by text key: `layouts/<k2>/<key>/` (layouts/probe.py)."""
        return self.path / "layouts"

    @property
    def layout_pictures(self) -> Path:
        """Rendered layout SVGs (layouts/pictures.py)."""
        return self.layouts / "pictures"

    @property
    def shadow(self) -> Path:
        """Candidate texts the agent verifies, never the user's file."""
        return self.path / "shadow"
