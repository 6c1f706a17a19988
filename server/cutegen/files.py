"""The one way CuTeGen writes a file: the user's (an applied fix, a generated kernel, a restored version) and its
own state under `.cutegen/` alike.

A temporary file in the same folder, flushed and fsynced, then `os.replace`d over the target: a reader sees the old
file or the new one, never half of either, and a full disk leaves the original byte for byte. The target's mode is
kept; a symlink is written through to the file it points at. On failure the temporary is removed and WriteError
names the path and the disk (its mount point and free space).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


class WriteError(OSError):
    """A file could not be written; the message says which, on which disk, and that the old one is intact."""

    def __init__(self, path: Path, error: OSError, existed: bool) -> None:
        self.path = path
        kept = f"{path.name} is unchanged" if existed else f"{path.name} was not created"
        self.sentence = f"cannot write {path}: {_reason(error)} ({_disk(path)}); {kept}"
        super().__init__(error.errno, self.sentence)

    def __str__(self) -> str:
        return self.sentence  # without OSError's "[Errno 28]"


def write_atomic(path: str | os.PathLike, data: str | bytes, *, new: bool = False) -> Path:
    """Replace (or create) `path` with `data` all at once; returns the path written. `new`: never replace an
    existing file (FileExistsError). Text is written as UTF-8, line endings as they are in `data`."""
    path = Path(os.path.realpath(path))
    existed = path.exists()
    if new and existed:
        raise FileExistsError(errno.EEXIST, f"{path} exists", str(path))
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(path, existed))
        if new:
            os.link(tmp, path)  # fails if the file appeared meanwhile: nothing of anyone's is replaced
        else:
            os.replace(tmp, path)
        _sync_folder(path.parent)
    except FileExistsError:
        raise
    except OSError as e:
        raise WriteError(path, e, existed) from e
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def is_disk_full(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


def _mode_for(path: Path, existed: bool) -> int:
    if existed:
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """The rename itself reaches the disk (best effort: some filesystems refuse a directory fsync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reason(error: OSError) -> str:
    if is_disk_full(error):
        return "no space left on the disk"
    return error.strerror or str(error)


def _disk(path: Path) -> str:
    """'the disk mounted at /mnt/small: 0 B of 256 KiB free' for the folder holding `path`."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    mount = folder
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return f"the disk mounted at {mount}"
    return f"the disk mounted at {mount}: {_size(st.f_bavail * st.f_frsize)} of {_size(st.f_blocks * st.f_frsize)} free"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def resolved(path: str | os.PathLike) -> Path:
    """`path` absolute, its symlinks followed; where that fails (a symlink loop: Path.resolve's RuntimeError before
    Python 3.13; a NUL byte) it stays absolute as written, and the open that follows fails with an OSError
    (ELOOP) that every reader handles, instead of a traceback here."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError, ValueError):
        return Path(os.path.abspath(path))
