"""The shared test build cache's folders (tests/conftest.py's build_state and kept_path fixtures)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import ENGINE, ROOT


def engine_hash() -> str:
    """The code that decides what a cached compile means: how nvcc and ptxas are called (the toolchain's
    own identity, nvcc and CUTLASS versions and the arch, is in every key already)."""
    h = hashlib.sha256()
    for path in sorted((ENGINE / "compile").glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


# -- folders that keep their build cache between runs ---------------------------------------------
#
# The build cache's key covers the file's path, so a kernel written into a fresh tmp_path compiles again in every
# run. A test that compiles in a folder of its own gets `kept_path` instead: a folder named by the checkout and the
# test, under the shared test build cache, emptied before the test of everything but its `.cutegen/cache` folders.
# Its texts compile at the same paths every run, so a warm run hits the cache where a cold one compiled, and the
# test starts as in a fresh folder otherwise (no records, transcripts or learned endpoints of the last run).

KEPT_AGE_S = 7 * 86400  # a kept folder unused this long (a renamed test's) goes


def slug(nodeid: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.rsplit("::", 1)[-1])[:32]
    return f"{name}-{hashlib.sha1(nodeid.encode()).hexdigest()[:8]}"


def _empty_but_caches(folder: Path) -> None:
    """Delete everything under `folder` but `.cutegen/cache` folders (and the folders holding them)."""
    for child in folder.iterdir():
        if child.is_symlink() or not child.is_dir():
            child.unlink()
        elif child.name == "cache" and folder.name == ".cutegen":
            continue
        elif (child.name == ".cutegen" and (child / "cache").is_dir()) or any(child.rglob(".cutegen/cache")):
            _empty_but_caches(child)
        else:
            shutil.rmtree(child)


@contextmanager
def kept_folder(build_state: Path, name: str):
    """The kept folder `name` of this checkout, emptied but for its build caches and locked while in use; None when
    the cache is off or another run holds it."""
    import fcntl

    if os.environ.get("CUTEGEN_TEST_CACHE") == "off":
        yield None
        return
    kept = build_state / "kept" / hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]
    folder = kept / name
    folder.mkdir(parents=True, exist_ok=True)
    with open(kept / f"{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield None
            return
        _empty_but_caches(folder)
        os.utime(folder)
        for old in kept.iterdir():
            if time.time() - old.stat().st_mtime > KEPT_AGE_S:
                shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)
        yield folder
