"""Optimization history of one kernel: every measured version (baseline or verified candidate),
each step's outcome, and the best so far, under `.cutegen/agent/<kernel>/history.json`.

Versions are stored as whole texts (`versions/<sha>.cu`) so the best one can be restored exactly,
whatever the file has become since.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from cutegen.agent.transcript import kernel_folder
from cutegen.files import write_atomic


def text_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class History:
    def __init__(self, state_dir: Path, kernel: Path):
        self.folder = kernel_folder(state_dir, kernel)
        self.path = self.folder / "history.json"
        self.kernel = str(Path(kernel).resolve())

    def load(self) -> dict:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            data = {}
        data.setdefault("kernel", self.kernel)
        data.setdefault("steps", [])
        data.setdefault("versions", {})
        return data

    def record(self, step: dict, versions: list[tuple[str, dict]]) -> dict:
        """Add one step and the measured versions it produced ((text, figures) pairs); returns the history."""
        data = self.load()
        for text, figures in versions:
            vid = text_id(text)
            (self.folder / "versions").mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / "versions" / f"{vid}.cu", text)
            data["versions"][vid] = {**figures, "id": vid, "time": time.time()}
        data["steps"].append({**step, "time": time.time()})
        data["best"] = self._best(data["versions"])
        write_atomic(self.path, json.dumps(data, indent=1))
        return data

    @staticmethod
    def _best(versions: dict) -> dict | None:
        timed = [v for v in versions.values() if isinstance(v.get("median_ms"), (int, float))]
        return min(timed, key=lambda v: v["median_ms"]) if timed else None

    def best(self) -> tuple[dict, str] | None:
        """The fastest measured version and its text, or None."""
        best = self.load().get("best")
        if not best:
            return None
        try:
            return best, (self.folder / "versions" / f"{best['id']}.cu").read_text()
        except OSError:
            return None
