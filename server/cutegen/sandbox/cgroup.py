"""The jail's memory and process caps, as cgroups: they bind root too (the kernel exempts root from RLIMIT_NPROC)
and count what RLIMIT_DATA cannot (shared mappings, the private RAM-backed /tmp). A jail over its memory cap is
killed by the kernel inside its own group, never by the host's OOM killer choosing the editor or the server.

cgroup v2 (`memory.max`, `memory.swap.max` 0, `memory.oom.group`, `pids.max`) or v1 (`memory.limit_in_bytes`
and `memsw`, a `pids` group). Groups nest under the server's own cgroup where it can have children (so the
server's own limits still hold), else under the hierarchy's root. Where none can be made (an unprivileged user
without delegation, a read-only /sys/fs/cgroup), `make` returns None and the jail falls back to RLIMIT_DATA.
Standard library only: `enter.py` runs without the package.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

PREFIX = "cutegen-sandbox-"
REAP_AFTER_S = 30.0  # a compile's group is reaped once empty; before this age its launcher may not have joined yet


@dataclass(frozen=True)
class Group:
    version: int  # 2, or 1 (then `dirs` holds the memory group and, if there is one, the pids group)
    dirs: tuple[Path, ...]
    memory_bytes: int

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def oom_kills(self) -> int:
        """Processes the kernel killed in this group for exceeding its memory cap."""
        events = _read(self.dirs[0] / ("memory.events" if self.version == 2 else "memory.oom_control"))
        for line in events.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def remove(self, wait_s: float = 5.0) -> None:
        """After the jail ended: its PID namespace empties within moments, then the group can go."""
        deadline = time.monotonic() + wait_s
        for d in self.dirs:
            while not _rmdir(d) and time.monotonic() < deadline:
                time.sleep(0.05)


def make(memory_bytes: int, max_processes: int, *, reap: bool = False) -> Group | None:
    """A fresh group with the caps set, or None where no memory cgroup can be made. With `reap`, the group is
    removed by this process once empty (the jail's launcher joins it; no one else waits for the jail)."""
    where = _layout()
    if where is None:
        return None
    version, memory_parent, pids_parent = where
    name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    dirs = [memory_parent / name] + ([pids_parent / name] if pids_parent and pids_parent != memory_parent else [])
    group = Group(version, tuple(dirs), memory_bytes)
    try:
        for d in dirs:
            d.mkdir()
        _set_caps(group, max_processes)
    except OSError:
        group.remove(0)
        return None
    if reap:
        _Reaper.add(group)
    return group


@functools.lru_cache(maxsize=1)
def memory_binds() -> bool:
    """Whether a memory cap binds here (a memory cgroup can be made), else the jail relies on RLIMIT_DATA."""
    group = make(1 << 30, 64)
    if group is None:
        return False
    group.remove(0)
    return True


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether a process-count limit binds here: not root (RLIMIT_NPROC), or root with a pids cgroup."""
    if os.geteuid() != 0:
        return True
    group = make(1 << 30, 64)
    if group is None:
        return False
    try:
        return any((d / "pids.max").exists() for d in group.dirs)
    finally:
        group.remove(0)


def _set_caps(group: Group, max_processes: int) -> None:
    mem = group.dirs[0]
    if group.version == 2:
        _write(mem / "memory.max", group.memory_bytes)
        _write(mem / "memory.swap.max", 0, optional=True)  # absent where the kernel has no swap accounting
        _write(mem / "memory.oom.group", 1, optional=True)  # the whole jail goes at once, not one thread of it
        _write(mem / "pids.max", max_processes, optional=True)
        return
    _write(mem / "memory.limit_in_bytes", group.memory_bytes)
    _write(mem / "memory.memsw.limit_in_bytes", group.memory_bytes, optional=True)  # memory + swap: no swap
    _write(mem / "memory.swappiness", 0, optional=True)
    if len(group.dirs) > 1:
        _write(group.dirs[1] / "pids.max", max_processes)


@functools.lru_cache(maxsize=1)
def _layout() -> tuple[int, Path, Path | None] | None:
    """(version, parent of memory groups, parent of pids groups) or None. Also sweeps groups of dead servers."""
    mounts = _mounts()
    own = _own_paths()
    found = _v2_parent(mounts.get("cgroup2"), own.get(""))
    layout: tuple[int, Path, Path | None] | None
    if found is not None:
        layout = (2, found, found)
    elif "memory" in mounts:
        memory = _v1_parent(mounts["memory"], own.get("memory", "/"))
        pids = _v1_parent(mounts["pids"], own.get("pids", "/")) if "pids" in mounts else None
        layout = (1, memory, pids) if memory is not None else None
    else:
        layout = None
    if layout is not None:
        _sweep({layout[1], *([layout[2]] if layout[2] else [])})
    return layout


def _v2_parent(mount: Path | None, own: str | None) -> Path | None:
    if mount is None or "memory" not in _read(mount / "cgroup.controllers").split():
        return None
    for parent in ([mount / own.lstrip("/")] if own and own != "/" else []) + [mount]:
        if _delegates(parent):
            return parent
    return None


def _delegates(parent: Path) -> bool:
    """Whether children of `parent` get the memory (and pids) controllers, enabling them if need be (a cgroup
    with processes of its own cannot hand controllers down, except the root)."""
    if not os.access(parent, os.W_OK):
        return False
    enabled = _read(parent / "cgroup.subtree_control").split()
    if "memory" in enabled:
        return True
    wanted = ["memory"] + (["pids"] if "pids" in _read(parent / "cgroup.controllers").split() else [])
    try:
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        return True
    except OSError:
        return False


def _v1_parent(mount: Path, own: str) -> Path | None:
    for parent in (mount / own.lstrip("/"), mount):
        if (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK):
            return parent
    return None


def _mounts() -> dict[str, Path]:
    """{"cgroup2": mount point, "memory": v1 mount point, "pids": v1 mount point} as this machine has them."""
    out: dict[str, Path] = {}
    for line in _read(Path("/proc/self/mounts")).splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2":
            out.setdefault("cgroup2", Path(fields[1]))
        elif fields[2] == "cgroup":
            for controller in ("memory", "pids"):
                if controller in fields[3].split(","):
                    out.setdefault(controller, Path(fields[1]))
    return out


def _own_paths() -> dict[str, str]:
    """This process's cgroup per controller ("" for v2), from /proc/self/cgroup."""
    out = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _sweep(parents: set[Path]) -> None:
    """Empty groups left by servers that died before reaping them."""
    for parent in parents:
        try:
            children = [p for p in parent.iterdir() if p.name.startswith(PREFIX)]
        except OSError:
            continue
        for child in children:
            owner = child.name[len(PREFIX):].split("-")[0]
            if owner.isdigit() and int(owner) != os.getpid() and not Path(f"/proc/{owner}").exists():
                _rmdir(child)


class _Reaper:
    """Removes this process's launcher-joined groups once they are empty, and all of them at exit."""

    _groups: dict[Group, float] = {}
    _lock = threading.Lock()

    @classmethod
    def add(cls, group: Group) -> None:
        with cls._lock:
            cls._reap(time.monotonic() - REAP_AFTER_S)
            cls._groups[group] = time.monotonic()

    @classmethod
    def _reap(cls, born_before: float) -> None:
        for group, born in list(cls._groups.items()):
            if born < born_before and all(_rmdir(d) for d in group.dirs):
                del cls._groups[group]

    @classmethod
    def at_exit(cls) -> None:
        with cls._lock:
            cls._reap(float("inf"))


atexit.register(_Reaper.at_exit)


def _rmdir(d: Path) -> bool:
    try:
        d.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:  # still populated (EBUSY)
        return False


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
