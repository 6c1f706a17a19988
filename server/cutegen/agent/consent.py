"""LLM endpoints the user has sent work to with a command, remembered per machine (never in the workspace).

The background fix sends a failing kernel to the LLM on its own after a save. It may do so only for an endpoint the
user has already used with an agent command on this machine, or when the user turned `backgroundAgent` on: else a
repository could point the editor at its own server and receive the kernel (and, once, the key) on file open.
The list lives under the user's config folder (`$XDG_CONFIG_HOME/cutegen`, else `~/.config/cutegen`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cutegen.files import write_atomic

SCHEMA = 1


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cutegen"


def _key(base_url: str) -> str:
    return base_url.strip().rstrip("/")


class UsedEndpoints:
    def __init__(self, file: Path | None = None) -> None:
        self.file = file or config_dir() / "llm-endpoints-used.json"

    def _read(self) -> list[str]:
        """The remembered endpoints; a missing file, or one of another shape, remembers none."""
        try:
            data = json.loads(self.file.read_text())
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("endpoints"), list):
            return []
        return [e for e in data["endpoints"] if isinstance(e, str)]

    def has(self, base_url: str) -> bool:
        return _key(base_url) in self._read()

    def add(self, base_url: str) -> bool:
        """Remember `base_url`; True when it was new. A file that cannot be written leaves it remembered for nobody
        (the next command asks again): never an error."""
        known = self._read()
        if _key(base_url) in known:
            return False
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.file, json.dumps({"schema": SCHEMA, "endpoints": [*known, _key(base_url)]}))
        except OSError:
            pass
        return True
