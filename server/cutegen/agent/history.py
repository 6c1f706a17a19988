"""Optimization history of one kernel: every measured version (baseline or verified candidate),
each step's outcome, and the best so far, under `.cutegen/agent/<kernel>/history.json`.

Versions are stored as whole texts (`versions/<sha>.cu`) so the best one can be restored exactly,
whatever the file has become since. "Best" is by the objective the history was last optimized for (time where it
names none: saves, older histories; agent/objective.py); a version without that figure is never best.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from cutegen.agent import objective as objectives
from cutegen.agent.transcript import kernel_folder
from cutegen.files import write_atomic


def text_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def measured_figures(figures: dict) -> dict:
    """What a version's entry keeps of the judge's figures: enough to rank it by any objective."""
    return {k: figures.get(k) for k in ("median_ms", "spread", "j_per_call", "energy_spread") if k in figures}


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

    def record(self, step: dict, versions: list[tuple[str, dict]], objective: str | None = None) -> dict:
        """Add one step and the measured versions it produced ((text, figures) pairs), judged by `objective`
        (kept when given); returns the history."""
        data = self.load()
        if objective:
            data["objective"] = objectives.known(objective)
        for text, figures in versions:
            vid = text_id(text)
            (self.folder / "versions").mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / "versions" / f"{vid}.cu", text)
            data["versions"][vid] = {**figures, "id": vid, "time": time.time()}
        data["steps"].append({**step, "time": time.time()})
        data["best"] = self._best(data["versions"], objectives.known(data.get("objective")))
        write_atomic(self.path, json.dumps(data, indent=1))
        return data

    @staticmethod
    def _best(versions: dict, objective: str) -> dict | None:
        scored = [(s.value, v) for v in versions.values()
                  if isinstance(s := objectives.score(objective, v), objectives.Score) and s.value > 0]
        return min(scored, key=lambda sv: sv[0])[1] if scored else None

    @property
    def objective(self) -> str:
        """The objective the history was last optimized for (time where none was recorded)."""
        return objectives.known(self.load().get("objective"))

    def best(self) -> tuple[dict, str] | None:
        """The best measured version by the history's objective and its text, or None."""
        data = self.load()
        best = self._best(data["versions"], objectives.known(data.get("objective")))
        if not best:
            return None
        try:
            return best, (self.folder / "versions" / f"{best['id']}.cu").read_text()
        except OSError:
            return None
