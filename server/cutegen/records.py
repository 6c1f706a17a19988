"""Run records: one JSON file per action under `.cutegen/runs/`, the single source of what the editor shows."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

SCHEMA_VERSION = 1


def write(state_dir: Path, kind: str, file: str, payload: dict) -> Path:
    """Store a record for `file`; returns its path. `latest-<kind>.json` always points at the newest."""
    folder = _folder(Path(state_dir).resolve(), file)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() % 1_000_000_000:09d}"
    record = {"schema": SCHEMA_VERSION, "kind": kind, "file": file, "time": time.time(), **payload}
    path = folder / f"{stamp}-{kind}.json"
    path.write_text(json.dumps(record, indent=1))
    latest = folder / f"latest-{kind}.json"
    tmp = latest.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(latest)
    return path


def finisher(state_dir: Path, kind: str, file: str, record: dict):
    """`finish(verdict, message, **extra)` for an action that may end at any of several steps: it completes
    `record` (verdict, message, seconds since now), writes it, notes where, and returns it."""
    started = time.perf_counter()

    def finish(verdict: str, message: str, **extra) -> dict:
        record.update(verdict=verdict, message=message, seconds=time.perf_counter() - started, **extra)
        record["record"] = str(write(state_dir, kind, file, record))
        return record

    return finish


def latest(state_dir: Path, file: str, kind: str) -> dict | None:
    path = _folder(state_dir, file) / f"latest-{kind}.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if record.get("schema") == SCHEMA_VERSION else None


def _folder(state_dir: Path, file: str) -> Path:
    # Readable and collision-free: the file's name plus a short hash of its full path.
    p = Path(file).resolve()
    return Path(state_dir) / "runs" / f"{p.stem}-{hashlib.sha1(str(p).encode()).hexdigest()[:8]}"
