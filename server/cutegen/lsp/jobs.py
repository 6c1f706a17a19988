"""The editor's running checks: one job per document, the save tier's (`diagnostics.py`) and the typing tier's
(`typing_tier.py`) alike. A newer job for a document cancels the older, both its task and its compiler (each
job has its own compiler job key, so cancelling never hits a newer job)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


class Compiler(Protocol):
    """What runs a job's compile (the session's Builder, the type tier's checker): cancelled by job key."""

    def cancel(self, job: str) -> None: ...


@dataclass
class Job:
    uri: str
    path: Path
    version: int | None  # None: the file is not open, its text comes from disk
    key: str
    stop: threading.Event = field(default_factory=threading.Event)
    builder: Compiler | None = None
    task: asyncio.Task | None = None
    saved: bool = True  # checks the saved state (open/save), not text still being typed
    text: str | None = None  # the editor's text it checks (None: the file on disk)
    unsaved: str = ""  # why its run record could not be written (a full disk): said once, after publishing

    def kill(self) -> None:
        """Stop the compiler (from any thread); the Builder returns a cancelled result."""
        self.stop.set()
        if self.builder is not None:
            self.builder.cancel(self.key)


class JobTable:
    """The running job of each document, by URI (used on the event loop only)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def start(self, job: Job) -> None:
        """`job` is the document's job now; an older one is cancelled."""
        self.cancel(job.uri)
        self._jobs[job.uri] = job

    def cancel(self, uri: str) -> None:
        job = self._jobs.pop(uri, None)
        if job is not None:
            job.kill()
            if job.task is not None:
                job.task.cancel()

    def cancel_all(self) -> None:
        for uri in list(self._jobs):
            self.cancel(uri)

    def finished(self, job: Job) -> None:
        """`job` ended: forgotten, unless a newer job of its document replaced it already."""
        if self._jobs.get(job.uri) is job:
            del self._jobs[job.uri]
