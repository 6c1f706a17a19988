"""The engine session both adapters build (the CLI for one command, the language server for an editor session):
settings, toolchain, one Builder per state dir, the warm GPU worker, latest check results, and the actions
(test, bench, profile with its per-line profile, sanitize) as calls that return a finished run record.

Nothing here speaks LSP or prints. Methods that may run processes (toolchain discovery, the harness) are called
from worker threads by the server, hence the lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from cutegen import records
from cutegen.build import Builder, Tier
from cutegen.model import CheckResult
from cutegen.settings import Settings
from cutegen.state import StateDir
from cutegen.toolchain import Toolchain, discover

Stage = Callable[[str], None]


class Session:
    def __init__(self, settings: Settings | None = None, *, state_dir: Path | None = None) -> None:
        self.settings = settings or Settings()
        self.roots: list[Path] = []  # workspace folders, first one first
        self.results: dict[str, CheckResult] = {}  # latest finished check, by resolved path
        self.fixed_state = StateDir(state_dir) if state_dir else None  # the CLI's --state-dir
        self._generation = 0  # bumped by every settings change
        self._shown_error: tuple[int, str] | None = None
        self._toolchain: Toolchain | None = None
        self._builders: dict[StateDir, Builder] = {}
        self._type_checkers: dict[StateDir, object] = {}  # the type tier's, per state dir (typecheck/checker.py)
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
            self._type_checkers.clear()
            self._generation += 1
            return True

    def state_dir(self, path: Path) -> StateDir:
        """The `.cutegen/` of the workspace holding `path` (an editor folder, else the nearest root: state.py)."""
        return self.fixed_state or StateDir.for_file(path, self.roots)

    def builder(self, path: Path) -> Builder:
        """The builder for `path`'s state dir. Blocking (discovery runs nvcc); raises ToolchainError."""
        with self._lock:
            if self._toolchain is None:
                self._toolchain = discover(self.settings)
            state = self.state_dir(path)
            if state not in self._builders:
                self._builders[state] = Builder(self._toolchain, self.settings, state)
            return self._builders[state]

    def type_checker(self, path: Path):
        """The type tier (clang on unsaved text) for `path`'s state dir; same toolchain as the builder."""
        from cutegen.typecheck import TypeChecker

        toolchain = self.builder(path).toolchain
        with self._lock:
            state = self.state_dir(path)
            if state not in self._type_checkers:
                self._type_checkers[state] = TypeChecker(toolchain, self.settings, state)
            return self._type_checkers[state]

    def worker(self, factory=None):
        """The GPU worker process (started on first use)."""
        with self._lock:
            if self._worker is None:
                if factory is None:
                    from cutegen.harness.worker import Worker as factory
                self._worker = factory()
            return self._worker

    def stop_worker(self) -> None:
        """Kill the worker (a cancelled or hung run); the next run starts a fresh one."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def close(self) -> None:
        self.stop_worker()

    def first_report(self, error: str) -> bool:
        """True the first time an error text is seen under the current settings: errors that every
        keystroke would repeat are shown once."""
        key = (self._generation, error)
        if self._shown_error == key:
            return False
        self._shown_error = key
        return True

    # -- actions: each returns the finished run record (records.finisher's dict) --------------------

    def test(self, path: Path, *, timing: bool = False, trials: int = 5, seed: int = 0,
             on_stage: Stage | None = None) -> dict:
        """Build, run in the worker, judge; `timing` also times the kernel against eager and torch.compile."""
        from cutegen.harness.run import verify_kernel

        builder = self.builder(path)
        return verify_kernel(path, builder, self.worker(), problem=self.settings.problem, trials=trials, seed=seed,
                             timing=timing, baselines=("eager", "compile") if timing else (),
                             state_dir=self.state_dir(path), on_stage=on_stage)

    def profile(self, path: Path, *, reference: bool = False, lines: bool = True, on_stage: Stage | None = None) -> dict:
        """Nsight Compute on one call: kernel-level figures and, with `lines`, the per-line profile from the same
        run (the record's `lines`; what a background profile-after-save loop can call)."""
        from cutegen.profiler import profile_kernel

        return profile_kernel(path, self.builder(path), self.worker(), problem=self.settings.problem,
                              state_dir=self.state_dir(path), reference=reference, on_stage=on_stage, lines=lines)

    def sanitize(self, path: Path, *, tools: tuple[str, ...] | None = None, on_stage: Stage | None = None) -> dict:
        """compute-sanitizer's tools on one call with the problem's inputs; findings at user lines."""
        from cutegen.profiler.sanitizer import TOOLS, sanitize_kernel

        return sanitize_kernel(path, self.builder(path), problem=self.settings.problem, state_dir=self.state_dir(path),
                               tools=tools or TOOLS, on_stage=on_stage)

    def latest_lines(self, path: Path) -> "records.LineProfile | None":
        """The per-line profile of the newest profile record of `path` (None without one)."""
        record = records.latest(self.state_dir(path), str(path), "profile")
        return record.lines if record is not None else None

    def latest_sanitize(self, path: Path) -> "records.RunRecord | None":
        return records.latest(self.state_dir(path), str(path), "sanitize")

    def cancel_build(self, path: Path) -> None:
        """Stop the build a test started (the harness builds under the Builder's default job)."""
        self.builder(path).cancel(Builder.job_key(Tier.BUILD, path))

    # -- results --------------------------------------------------------------------------------

    def latest_check(self, path: Path) -> CheckResult | None:
        """The newest check of `path`: from this session, else from its run record on disk."""
        key = str(path)
        if key not in self.results:
            record = records.latest(self.state_dir(path), key, "check")
            self.results[key] = record.check if record else None
        return self.results[key]
