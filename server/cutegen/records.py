"""Run records: one JSON file per action under `.cutegen/runs/`, the single source of what the editor shows."""

from __future__ import annotations

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


def latest(state_dir: Path, file: str, kind: str) -> dict | None:
    path = _folder(state_dir, file) / f"latest-{kind}.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if record.get("schema") == SCHEMA_VERSION else None


def _folder(state_dir: Path, file: str) -> Path:
    # Readable and collision-free: the file's name plus a short hash of its full path.
    import hashlib

    p = Path(file).resolve()
    return Path(state_dir) / "runs" / f"{p.stem}-{hashlib.sha1(str(p).encode()).hexdigest()[:8]}"
