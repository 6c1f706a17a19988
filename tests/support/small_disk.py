"""A real full disk for tests: a tmpfs of a few hundred KiB mounted on a folder (root, as CI and this machine run),
then filled until the kernel says ENOSPC. Nothing is patched: every write goes through the real filesystem.

    with small_disk(folder, kib=512) as disk:
        (disk / "kernel.cu").write_text(...)
        fill(disk)          # from here on, any write that needs a new page fails with ENOSPC
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest


def can_mount() -> str | None:
    """Why no tmpfs can be mounted here, or None."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root (CI runs as root)"
    if shutil.which("mount") is None:
        return "no mount(8)"
    return None


@contextlib.contextmanager
def small_disk(folder: Path, kib: int = 512):
    why = can_mount()
    if why:
        pytest.skip(why)
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k,mode=0755", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(disk: Path) -> Path:
    """Take every free byte of `disk` with one filler file; returns it (delete it to free the space)."""
    filler = disk / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (65536, 4096, 512, 64, 8, 1):  # down to the last partial page
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)
    assert os.statvfs(disk).f_bavail == 0
    return filler
