"""A process-count limit that binds real root too. The kernel exempts root from RLIMIT_NPROC, so when the
server runs as root (containers, the GPU machine) the jailed worker is put in a pids cgroup of its own,
where one can be made (cgroup v1 `pids` or v2 with the pids controller). Best effort: None when not."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


def make(max_processes: int) -> Path | None:
    """A fresh cgroup with pids.max set, or None (not root, no writable pids hierarchy)."""
    if os.geteuid() != 0:
        return None
    for root in _ROOTS:
        if not (root / "cgroup.procs").exists() or not os.access(root, os.W_OK):
            continue
        if root == Path("/sys/fs/cgroup") and "pids" not in _read(root / "cgroup.subtree_control"):
            continue  # v2 without the pids controller delegated to children
        group = root / f"cutegen-sandbox-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(max_processes))
            return group
        except OSError:
            remove(group)
    return None


def enter(group: Path | None) -> None:
    """In the child before exec (preexec_fn): join the group, so bwrap and everything under it count."""
    if group is not None:
        with open(group / "cgroup.procs", "w") as f:
            f.write(str(os.getpid()))


def remove(group: Path | None, wait_s: float = 5.0) -> None:
    """After the jail is killed: its PID namespace empties within moments; the group goes with it."""
    if group is None:
        return
    deadline = time.monotonic() + wait_s
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


def available() -> bool:
    """Whether a process-count limit binds here: not root (RLIMIT_NPROC), or root with a pids cgroup."""
    if os.geteuid() != 0:
        return True
    group = make(1)
    remove(group)
    return group is not None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
