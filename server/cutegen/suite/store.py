"""results.jsonl under --out: one complete JSON line per finished problem, appended atomically.

A rerun skips every name with a line. Only whole lines count: a run killed mid-write leaves at most a partial last
line, which is ignored (and the next append starts on a fresh line), so any interruption leaves a state that
resumes."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

RESULTS = "results.jsonl"


class ResultStore:
    def __init__(self, out: Path):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.path = self.out / RESULTS
        self._lock = threading.Lock()

    def rows(self) -> list[dict]:
        return load(self.out)

    def done(self) -> set[str]:
        return {r["name"] for r in self.rows()}

    def append(self, row: dict) -> None:
        line = json.dumps(row, default=str) + "\n"
        with self._lock:
            with open(self.path, "ab") as f:
                if f.tell() > 0 and not _ends_with_newline(self.path):
                    f.write(b"\n")  # close a line torn by an earlier kill
                f.write(line.encode())
                f.flush()
                os.fsync(f.fileno())


def load(out: Path) -> list[dict]:
    """The rows of a results folder (or a results.jsonl path); the last line per name wins."""
    path = Path(out)
    path = path / RESULTS if path.is_dir() else path
    rows: dict[str, dict] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a torn line from an interrupted run
        if isinstance(row, dict) and "name" in row:
            rows[row["name"]] = row
    return list(rows.values())


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
