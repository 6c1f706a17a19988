"""The engine objects of one editor session: settings, toolchain, one Builder per state dir, latest results.

Nothing here speaks LSP. Methods that may run processes (toolchain discovery) are called from worker
threads, hence the lock.
"""

from __future__ import annotations

import threading
from pathlib import Path

from cutegen import records
from cutegen.build import Builder
from cutegen.model import CheckResult
from cutegen.settings import Settings
from cutegen.toolchain import Toolchain, discover

STATE_DIR_NAME = ".cutegen"


class Session:
    def __init__(self) -> None:
        self.settings = Settings()
        self.roots: list[Path] = []  # workspace folders, first one first
        self.results: dict[str, CheckResult] = {}  # latest finished check, by resolved path
        self._generation = 0  # bumped by every settings change
        self._shown_error: tuple[int, str] | None = None
        self._toolchain: Toolchain | None = None
        self._builders: dict[Path, Builder] = {}
        self._worker = None  # the harness's GPU worker process, kept warm between tests
        self._lock = threading.Lock()

    def apply(self, settings: Settings) -> bool:
        """Use new settings; returns whether anything changed (then the toolchain is found again)."""
        with self._lock:
            if settings == self.settings:
                return False
            self.settings = settings
            self._toolchain = None
            self._builders.clear()
            self._generation += 1
            return True

    def state_dir(self, path: Path) -> Path:
        """`<workspace folder>/.cutegen` for files inside a folder, else `.cutegen` next to the file."""
        for root in self.roots:
            if path.is_relative_to(root):
                return root / STATE_DIR_NAME
        return path.parent / STATE_DIR_NAME

    def builder(self, path: Path) -> Builder:
        """The builder for `path`'s state dir. Blocking (discovery runs nvcc); raises ToolchainError."""
        with self._lock:
            if self._toolchain is None:
                self._toolchain = discover(self.settings)
            state = self.state_dir(path)
            if state not in self._builders:
                self._builders[state] = Builder(self._toolchain, self.settings, state)
            return self._builders[state]

    def worker(self, factory):
        with self._lock:
            if self._worker is None:
                self._worker = factory()
            return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()

    def first_report(self, error: str) -> bool:
        """True the first time an error text is seen under the current settings: errors that every
        keystroke would repeat are shown once."""
        key = (self._generation, error)
        if self._shown_error == key:
            return False
        self._shown_error = key
        return True

    def latest_check(self, path: Path) -> CheckResult | None:
        """The newest check of `path`: from this session, else from its run record on disk."""
        key = str(path)
        if key not in self.results:
            record = records.latest(self.state_dir(path), key, "check")
            try:
                self.results[key] = CheckResult.from_json(record["result"]) if record else None
            except (KeyError, TypeError, ValueError):
                self.results[key] = None
        return self.results[key]
