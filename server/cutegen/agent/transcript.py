"""Agent transcripts under `.cutegen/agent/<kernel>/<time>-<action>/`: one JSON file per LLM step
(the messages sent, the reply's answer whole, the model's reasoning -- reasoning_content or <think> blocks,
kept here only -- the finish reason, tokens, what the client learned about the endpoint, the parsed patch,
the verdict) and a summary. Every string passes through a scrubber that removes the API key, so no
transcript can hold it (even if an endpoint echoed it back). What is shown elsewhere of a long reply is an
excerpt that says where the whole of it is."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cutegen.files import write_atomic
from cutegen.sandbox import redact
from cutegen.state import StateDir

SCHEMA_VERSION = 1  # of a transcript's files


SHOWN_CHARS, SHOWN_LINES = 6000, 80  # what a hover or a terminal shows of one reply


def excerpt(text: str, where: Path) -> str:
    """`text` as shown: whole when short, else its first lines and where all of it is (the transcript)."""
    lines = text.split("\n")
    if len(text) <= SHOWN_CHARS and len(lines) <= SHOWN_LINES:
        return text
    head = "\n".join(lines[:SHOWN_LINES])[:SHOWN_CHARS]
    head = head[:head.rfind("\n")] if "\n" in head[SHOWN_CHARS // 2:] else head  # end on a whole line
    rest = len(text) - len(head)
    return f"{head}\n\n[… {rest:,} more characters of this reply are in the transcript: {where}]"


def kernel_folder(state_dir: "Path | StateDir", kernel: Path) -> Path:
    return StateDir(state_dir).agent(kernel)


class Transcript:
    def __init__(self, state_dir: Path, kernel: Path, action: str, secrets: list[str] | None = None):
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() % 1_000_000:06d}"
        self.folder = kernel_folder(state_dir, kernel) / f"{stamp}-{action}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.kernel, self.action = str(Path(kernel).resolve()), action
        self._secrets = [s for s in (secrets or []) if s]
        self._n = 0

    def step(self, round_no: int, step: str, **payload) -> Path:
        """One LLM step (diagnose, patch, optimize, generate) or one verification."""
        self._n += 1
        path = self.folder / f"{self._n:02d}-round{round_no}-{step}.json"
        self._write(path, {"round": round_no, "step": step, **payload})
        return path

    def finish(self, **summary) -> Path:
        path = self.folder / "summary.json"
        self._write(path, {"kernel": self.kernel, "action": self.action, **summary})
        return path

    def _write(self, path: Path, payload: dict) -> None:
        record = {"schema": SCHEMA_VERSION, "time": time.time(), **payload}
        write_atomic(path, json.dumps(self._scrub(record), indent=1, default=str))

    def _scrub(self, value):
        if isinstance(value, str):
            for s in self._secrets:
                value = value.replace(s, "***")
            return redact.text(value, self._secrets)
        if isinstance(value, dict):
            return {k: self._scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._scrub(v) for v in value]
        return value
