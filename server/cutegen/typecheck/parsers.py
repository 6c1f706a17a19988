"""The type tier's parser processes (`clang_parse.py`), one started ahead of the request that needs it.

A parse runs in a child process so that a newer edit can kill it; starting Python and loading libclang costs
0.15-0.25 s on 2 loaded cores, a third of a small kernel's parse against its PCH. So one spare process is kept
waiting on its stdin with libclang loaded, and the next is started once the request that took it is answered
(not beside it: on 2 cores the start would slow that parse). An idle spare holds ~40 MB.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from cutegen.typecheck import clang_parse


class Parsers:
    def __init__(self) -> None:
        self._spare: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def take(self) -> subprocess.Popen:
        """A parser process waiting for its request: the spare if it is alive, else a new one."""
        with self._lock:
            proc, self._spare = self._spare, None
        return proc if proc is not None and proc.poll() is None else _start()

    def refill(self) -> None:
        """Start the next spare (after a request was answered)."""
        with self._lock:
            if self._spare is None or self._spare.poll() is not None:
                self._spare = _start()

    def close(self) -> None:
        with self._lock:
            proc, self._spare = self._spare, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()


def _start() -> subprocess.Popen:
    # Run by path, not `-m`: the child needs no cutegen import, only libclang (fast to start). A session of its
    # own: a newer edit kills the parse's whole process group.
    return subprocess.Popen([sys.executable, clang_parse.__file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
