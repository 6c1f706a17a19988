"""Layout facts for an editor: probe builds in the background, answers from memory.

A clean check of a saved version starts its probe build (one at a time: nvcc is CPU-bound); a newer version
of the same file makes the older, queued or running, probe moot (it is skipped or killed). Lookups never
compile: they answer from memory (or the probe's cache on disk, read when the probe is started) in well
under a millisecond, or say that the layouts are being computed.
"""

from __future__ import annotations

import atexit
import hashlib
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cutegen.layouts.probe import LayoutProbe, ProbeResult

READY, COMPUTING, UNKNOWN = "ready", "computing", "unknown"


@dataclass
class Lookup:
    state: str  # READY, COMPUTING or UNKNOWN (never probed: the file did not compile cleanly yet)
    result: ProbeResult | None = None


def version_key(path: Path, text: str) -> str:
    return hashlib.sha256(f"{path}\0{text}".encode()).hexdigest()


class LayoutService:
    def __init__(self, probe_for: Callable[[Path], LayoutProbe],
                 on_done: Callable[[Path, ProbeResult], None] | None = None):
        self._probe_for = probe_for  # may block (toolchain discovery): called on the worker thread only
        self._on_done = on_done
        self._results: dict[str, ProbeResult] = {}  # by version key
        self._latest: dict[Path, str] = {}  # the newest version asked for, per file
        self._newest_done: dict[Path, str] = {}  # the newest version probed, per file
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._probes: set[LayoutProbe] = set()  # those that may have an nvcc running, killed on close()
        # One daemon worker: probes run one at a time, and a server that exits never waits for one.
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._work, name="cutegen-layouts", daemon=True).start()
        atexit.register(self.close)

    def lookup(self, path: Path, text: str) -> Lookup:
        key = version_key(path, text)
        with self._lock:
            if key in self._results:
                return Lookup(READY, self._results[key])
            if key in self._running or self._latest.get(path) == key:
                return Lookup(COMPUTING)
        return Lookup(UNKNOWN)

    def latest(self, path: Path) -> ProbeResult | None:
        """The result of the newest version probed so far (maybe not the current text's)."""
        with self._lock:
            key = self._newest_done.get(path)
            return self._results.get(key) if key else None

    def start(self, path: Path, text: str):
        """Probe this version in the background (a no-op when it is known or already queued)."""
        key = version_key(path, text)
        with self._lock:
            if key in self._results or key in self._running:
                return None
            older = self._latest.get(path)
            self._latest[path] = key
            self._running.add(key)
        if older is not None and older != key:
            try:
                self._probe_for(path).cancel(path)  # kills an older probe of this file if one is running
            except Exception:
                pass
        future: Future = Future()
        self._queue.put((future, path, text, key))
        return future

    def _work(self) -> None:
        while True:
            future, path, text, key = self._queue.get()
            try:
                future.set_result(self._run(path, text, key))
            except BaseException as e:  # reported through the future; the worker goes on
                future.set_exception(e)

    def _run(self, path: Path, text: str, key: str) -> ProbeResult | None:
        try:
            with self._lock:
                if self._latest.get(path) != key:
                    return None  # a newer version came while this one waited
            probe = self._probe_for(path)
            self._probes.add(probe)
            result = probe.run(path, text)
            if result.cancelled:
                return None
            with self._lock:
                self._results[key] = result
                self._newest_done[path] = key
                # keep only the newest probed version of each file
                keep = set(self._newest_done.values())
                for old in [k for k in self._results if k not in keep]:
                    del self._results[old]
            if self._on_done is not None:
                self._on_done(path, result)
            return result
        finally:
            with self._lock:
                self._running.discard(key)

    def close(self) -> None:
        """Kill the probes' compilers (server shutdown, process exit)."""
        for probe in list(self._probes):
            probe.cancel_all()
