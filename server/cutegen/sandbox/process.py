"""The jailed worker process, seen from the caller as a `multiprocessing.Process` + `Connection` pair.

The pipes carry JSON, never pickle: unpickling what a jailed process sends would let it run code in
the (unjailed) caller. The worker's stdout and stderr go to the caller's stderr, never its stdout (the
language server's protocol channel).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from multiprocessing.connection import Connection

from cutegen.sandbox import cgroup
from cutegen.sandbox.jail import Jail

MAX_REPLY = 64 << 20


class JsonConnection:
    """`send`/`recv`/`poll` of a multiprocessing Connection, with JSON bodies."""

    def __init__(self, reader: Connection, writer: Connection):
        self._reader, self._writer = reader, writer

    def send(self, obj: dict) -> None:
        self._writer.send_bytes(json.dumps(obj, default=str).encode())

    def recv(self) -> dict:
        try:
            reply = json.loads(self._reader.recv_bytes(MAX_REPLY))
        except ValueError as e:  # not JSON: treated like a dead worker, never trusted
            raise EOFError(f"the jailed worker sent malformed data ({e})") from e
        if not isinstance(reply, dict):
            raise EOFError("the jailed worker sent something other than a JSON object")
        return reply

    def poll(self, timeout: float) -> bool:
        return self._reader.poll(timeout)

    def close(self) -> None:
        self._reader.close()
        self._writer.close()


class JailedProcess:
    """`bwrap ... python -m cutegen.harness.worker --read-fd R --write-fd W`, with the Process methods the
    Worker uses (is_alive, kill, join, exitcode)."""

    def __init__(self, jail: Jail):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # The memory and process caps (root is exempt from RLIMIT_NPROC; RLIMIT_DATA misses shared memory and
        # /tmp): a cgroup of its own, read after the worker dies (was it killed for memory?) and then removed.
        self.cgroup = cgroup.make(jail.limits.memory_bytes, jail.limits.processes)
        self.memory_cap = jail.limits.memory_bytes
        self.oom_killed = False
        program = [sys.executable, "-m", "cutegen.harness.worker", "--read-fd", str(to_child_r), "--write-fd",
                   str(from_child_w), *jail.limits.args(rlimit_memory=self.cgroup is None)]
        log = stderr_fd()
        self._popen = subprocess.Popen(jail.command(program, limited=False, group=self.cgroup),
                                       pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=log, start_new_session=True, preexec_fn=die_with_parent)
        os.close(to_child_r)
        os.close(from_child_w)
        self.conn = JsonConnection(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def kill(self) -> None:
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)  # bwrap and, through --die-with-parent, its PID namespace
        except ProcessLookupError:
            pass
        self.conn.close()

    def join(self, timeout: float | None = None) -> None:
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return
        if self.cgroup is not None:
            self.oom_killed = self.oom_killed or self.cgroup.oom_kills() > 0
            self.cgroup.remove()

    def oom_kills(self) -> int:
        """Processes of this jail the kernel has killed so far for exceeding its memory cap (a candidate process
        may be killed while the judge in the same jail lives on and reports it)."""
        return self.cgroup.oom_kills() if self.cgroup is not None else 0

    def memory_cap_text(self) -> str:
        return (f"the candidate exceeded the sandbox's memory cap of {self.memory_cap / 2**30:.1f} GiB of host "
                "memory (its /tmp counts) and was killed")

    def ended_by_memory_cap(self) -> str | None:
        """After join: the verdict's message when the kernel killed the jail for exceeding its memory cap."""
        return self.memory_cap_text() if self.oom_killed else None

    @property
    def exitcode(self) -> int | None:
        return self._popen.returncode


def stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced sys.stderr: the process's own fd 2
        return 2


def die_with_parent() -> None:
    """A child's preexec_fn: it dies with its parent (bwrap with the server; a candidate process with its judge)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
