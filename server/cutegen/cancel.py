"""Cancelling work that runs in another thread: the background loop's stages and the profiler's ncu.

A `Cancel` is handed to the work. Processes the work starts through `Cancel.run` get a session of their
own (ncu starts the profiled program and Nsight's own helpers: a kill must reach them all), so another
thread can kill them at any time. Two strengths, because the background loop needs both:

- `stop_processes()`: processes are worthless now (a newer save): the running ones die and no new one
  starts (`run` raises `Cancelled`); work that is not a process (a call in the GPU worker) goes on.
- `cancel()`: stop everything now (the user pressed Cancel, shutdown): also every later `run` or `check`
  raises, and the hooks run (e.g. stopping the GPU worker mid-call).

Work that is cancelled raises `Cancelled` and writes no run record: a cancelled profile must not replace
the last real one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import Callable


class Cancelled(Exception):
    """The work was cancelled; nothing it would have produced was written."""


class Cancel:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._stopped = False  # no more processes
        self._procs: set[subprocess.Popen] = set()
        self._killed: set[subprocess.Popen] = set()
        self._hooks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        """Raise Cancelled once cancel() was called (a boundary where work may stop cleanly)."""
        if self._cancelled:
            raise Cancelled("cancelled")

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run `hook` when cancel() is called (at once if it was)."""
        with self._lock:
            if not self._cancelled:
                self._hooks.append(hook)
                return
        hook()

    def stop_processes(self) -> None:
        """Kill the processes running now (their whole sessions) and refuse new ones: `run` raises Cancelled."""
        with self._lock:
            self._stopped = True
            running = [p for p in self._procs if p.poll() is None]
            self._killed.update(running)
        for proc in running:
            _kill(proc)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            hooks, self._hooks = self._hooks, []
        self.stop_processes()
        for hook in hooks:
            hook()

    def run(self, argv: list[str], *, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
        """subprocess.run(argv, capture_output=True, text=True) that the other thread can kill. Raises Cancelled
        when it was killed through this object (or cancel() came first), TimeoutExpired after killing it."""
        with self._lock:
            if self._stopped:
                raise Cancelled("stopped before it started")
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                    start_new_session=True)
            self._procs.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            raise
        finally:
            with self._lock:
                self._procs.discard(proc)
                killed = proc in self._killed
                self._killed.discard(proc)
        if killed:
            raise Cancelled(f"{os.path.basename(argv[0])} was stopped")
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process's group, then whatever else is left in its session (a tool may start its target in a
    process group of its own; only setsid would leave the session)."""
    for pid in [proc.pid, *_session_members(proc.pid)]:
        try:
            os.killpg(pid, signal.SIGKILL) if pid == proc.pid else os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _session_members(sid: int) -> list[int]:
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit() or int(name) == sid:
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if len(fields) > 3 and fields[3] == str(sid):
            members.append(int(name))
    return members
