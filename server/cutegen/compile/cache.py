"""Content-addressed build cache under `.cutegen/cache/`: a hit returns without running nvcc, and without
condensing the log again (its diagnosis is stored beside it, so a hit starts no process: no cu++filt)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Callable, Iterator

from cutegen.files import write_atomic
from cutegen.model import Diagnostic, KernelResources

# The code a stored diagnosis was made by: a change to the condenser (or to the result model it writes) makes
# every stored diagnosis stale, and it is made again from the cached log (the key covers only the compile).
_ENGINE = Path(__file__).resolve().parents[1]
_DIAGNOSIS_CODE = (_ENGINE / "diagnostics", _ENGINE / "model.py")


@cache
def diagnosis_code() -> str:
    h = hashlib.sha256()
    for root in _DIAGNOSIS_CODE:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def cache_key(*, tier: str, fingerprint: str, command_flags: list[str], text: str, headers: list[Path]) -> str:
    h = hashlib.sha256()
    for part in (tier, fingerprint, "\0".join(command_flags), text):
        h.update(part.encode())
        h.update(b"\1")
    for header in headers:
        h.update(str(header).encode())
        try:
            h.update(header.read_bytes())
        except OSError:
            h.update(b"<unreadable>")
    return h.hexdigest()[:32]


# outcome.json's fields and their JSON types: compile/builder.py's CompileOutcome, which a hit is made into (a test
# ties them).
# A file of another shape (another version's cache in a shared `.cutegen/`, a damaged disk) is a miss, not an error.
OUTCOME_TYPES: dict[str, type | tuple[type, ...]] = {
    "returncode": int, "ptxas_ok": bool, "log": str, "command": list, "seconds": (int, float),
    "artifact": (str, type(None)), "timed_out": bool, "cancelled": bool, "timeout": (int, float), "torch": bool,
    "progress": str}
OUTCOME_REQUIRED = ("returncode", "ptxas_ok", "log", "command", "seconds", "artifact")
_reported: set[str] = set()  # entries whose bad outcome.json was logged: once each


def outcome_problem(outcome: object) -> str | None:
    """Why a stored outcome cannot be used, or None."""
    if not isinstance(outcome, dict):
        return f"a JSON {type(outcome).__name__}, not an object"
    for name in OUTCOME_REQUIRED:
        if name not in outcome:
            return f"no '{name}'"
    for name, value in outcome.items():
        if name not in OUTCOME_TYPES:
            return f"an unknown field '{name}'"
        if not isinstance(value, OUTCOME_TYPES[name]):
            return f"'{name}' is {value!r}"
    if not all(isinstance(a, str) for a in outcome["command"]):
        return "'command' holds a non-string"
    return None


class BuildCache:
    def __init__(self, root: Path, problem=None):
        """`problem(stored) -> why it cannot be used, or None`: the shape check of what `put` stores (default: a
        compiler outcome's, `outcome_problem`; the type tier stores clang's answers, with a check of its own)."""
        self.root = root
        self._problem = problem or outcome_problem

    def entry(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> dict | None:
        """The compiler outcome stored for `key` (its log, exit codes, artifact), or None.

        The diagnosis made from it is stored apart (`diagnosis`): a newer condenser makes it again from this.
        """
        file = self.entry(key) / "outcome.json"
        try:
            outcome = json.loads(file.read_text())
        except (OSError, ValueError):
            return None
        problem = self._problem(outcome)
        if problem:
            if str(file) not in _reported:
                _reported.add(str(file))
                logging.getLogger(__name__).warning("ignored %s (compiled again): %s", file, problem)
            return None
        try:
            if outcome.get("artifact") and not Path(outcome["artifact"]).exists():
                return None
        except (OSError, ValueError):  # a path with a NUL byte, one too long
            return None
        return outcome

    @contextmanager
    def compiling(self, key: str, cancelled: Callable[[], bool]) -> Iterator[bool]:
        """Held while one compile of `key` runs. Two at once (two processes on one `.cutegen/`, two test workers on
        the shared test cache, a command beside the background loop) would write the same nvcc outputs in place in
        one entry, and one could read the other's half-written .ptx or .so; the second waits here instead, then
        finds the first one's outcome stored. The wait polls, so a cancel ends it: yields False then. An entry that
        cannot be made (a full disk, read-only) is no lock: yields True at once, and the compile goes to a private
        folder (builder._source_copy)."""
        try:
            entry = self.entry(key)
            entry.mkdir(parents=True, exist_ok=True)
            lock = open(entry / "compiling.lock", "a")
        except OSError:
            yield True
            return
        with lock:  # closing the file releases the lock, also when the holder is killed
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if cancelled():
                        yield False
                        return
                    time.sleep(0.05)
                except OSError:  # a file system without locks (some network mounts): compile unlocked, as before
                    break
            yield True

    def put(self, key: str, outcome: dict) -> None:
        entry = self.entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        write_atomic(entry / "outcome.json", json.dumps(outcome))  # a concurrent reader never sees half a file

    def diagnosis(self, key: str, made_by: str) -> tuple[list[Diagnostic], list[KernelResources]] | None:
        """The diagnostics and kernel resources stored for `key` by the same diagnosis (`made_by`: the
        condenser's code and the demangler), or None: none stored, another version's, or unreadable."""
        try:
            stored = json.loads((self.entry(key) / "diagnosis.json").read_text())
            if stored["made_by"] != made_by:
                return None
            return ([Diagnostic.from_json(d) for d in stored["diagnostics"]],
                     [KernelResources(**r) for r in stored["resources"]])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_diagnosis(self, key: str, made_by: str, diagnostics: list[Diagnostic],
                      resources: list[KernelResources]) -> None:
        stored = {"made_by": made_by, "diagnostics": [d.to_json() for d in diagnostics],
                  "resources": [asdict(r) for r in resources]}
        write_atomic(self.entry(key) / "diagnosis.json", json.dumps(stored))

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
