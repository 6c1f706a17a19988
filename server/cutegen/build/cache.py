"""Content-addressed build cache under `.cutegen/cache/`: a hit returns without running nvcc."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from cutegen.files import write_atomic



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


class BuildCache:
    def __init__(self, root: Path):
        self.root = root

    def entry(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> dict | None:
        """The compiler outcome stored for `key` (its log, exit codes, artifact), or None.

        Only what the compiler said is cached; diagnostics are derived from it again on every hit
        (milliseconds), so a newer condenser never serves stale messages.
        """
        try:
            outcome = json.loads((self.entry(key) / "outcome.json").read_text())
        except (OSError, ValueError):
            return None
        if outcome.get("artifact") and not Path(outcome["artifact"]).exists():
            return None
        return outcome

    def put(self, key: str, outcome: dict) -> None:
        entry = self.entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        write_atomic(entry / "outcome.json", json.dumps(outcome))  # a concurrent reader never sees half a file

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
