"""The background loop's engine: after a save that compiles cleanly, test the saved version, then time it, then
(when it passed and its text changed since the last profile) profile it, and say how it compares with the last
passing version.

What a version needs is read from the run records (each carries the digest of the text it was made from:
records.Recorder), so a save that changes nothing runs nothing, and a version tested before the server
restarted is not tested again. A `Run` executes one version's stages in the calling thread:
`stop()` (a newer save) ends it at the next stage boundary and kills what is worthless at once (its
build's nvcc, a running ncu); `cancel()` (the user) also stops the GPU worker mid-call. Cancelled stages
write no record, so a killed profile never replaces the last real one.

Scheduling (which file runs when, progress, what the editor shows) is the adapter's: lsp/background.py.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Callable

from cutegen import records
from cutegen.compile import Builder, Tier
from cutegen.cancel import Cancel, Cancelled
from cutegen.model import Diagnostic, Severity
from cutegen.pairing import find_problem
from cutegen.records import RunRecord

NO_GPU = "no GPU: testing on save is off"
# A version is slower only beyond both timings' intervals and by more than this share: the agent's noise floor
# for "faster" (agent/candidates.NOISE_FLOOR), applied the other way.
SLOWER_FLOOR = 0.02


class Stage(str, Enum):
    TEST = "test"
    TIME = "time"
    PROFILE = "profile"

    @property
    def kind(self) -> str:
        """The run record kind the stage writes."""
        return {"test": "test", "time": "bench", "profile": "profile"}[self.value]


@dataclass
class Plan:
    """What one saved version needs. `stages` empty: nothing runs; `why_not` then says why, when a person
    should hear it (no GPU), else it is empty (the loop is off, no problem is paired, the figures are current)."""

    stages: list[Stage] = field(default_factory=list)
    digest: str | None = None
    why_not: str = ""


def plan(session, path: Path, *, gpu: bool) -> Plan:
    """Blocking (reads records and the file; `gpu` comes from toolchain.local_gpu_arch, which runs nvidia-smi)."""
    settings = session.settings
    if not (settings.test_on_save or settings.auto_test):
        return Plan()
    problem = find_problem(path, settings.problem)
    if problem is None or not problem.is_file():
        return Plan()
    if not gpu and not settings.auto_test:
        return Plan(why_not=NO_GPU)
    digest = records.source_digest(path)
    state, file = session.state_dir(path), str(path)
    latest = {stage: records.latest(state, file, stage.kind) for stage in Stage}
    # A record is current when it was made from this text and judged something ("not run: no GPU" was not); a
    # profile of the PyTorch reference (Profile's reference mode) is no profile of the kernel.
    current = {stage: r for stage, r in latest.items() if r is not None and digest and r.source_digest == digest
               and r.level != "info" and not r.details.get("reference")}
    stages = []
    if Stage.TEST not in current:
        stages.append(Stage.TEST)
    elif not current[Stage.TEST].passed:
        return Plan(digest=digest)  # this text was tested and failed: the save changed nothing
    if gpu:
        stages += [s for s in (Stage.TIME, Stage.PROFILE) if s not in current]
    if not settings.profile_after_test and Stage.PROFILE in stages:
        stages.remove(Stage.PROFILE)
    return Plan(stages, digest)


@dataclass
class Event:
    """A stage started ("running", `step` naming its part: build, test, ncu...) or ended ("done", with its record)."""

    stage: Stage
    state: str
    at: float  # time.monotonic()
    step: str = ""
    record: RunRecord | None = None


@dataclass
class LoopResult:
    """What one saved version's run through the loop's stages left: each stage's record, and a regression."""

    path: Path
    digest: str | None
    records: dict[Stage, RunRecord] = field(default_factory=dict)  # the finished record of each stage that ran
    cancelled: bool = False
    regression: "Regression | None" = None


class Run:
    """One saved version through its planned stages."""

    def __init__(self, session, path: Path, planned: Plan, on_event: Callable[[Event], None] | None = None) -> None:
        self.session, self.path, self.plan = session, Path(path), planned
        self.on_event = on_event or (lambda e: None)
        self.token = Cancel()
        self._stopping = False
        self._builder: Builder | None = None

    @property
    def digest(self) -> str | None:
        return self.plan.digest

    def stop(self) -> None:
        """A newer save: no new stage starts; the build and ncu, whose results are worthless now, die now. A
        test or timing call already in the worker finishes (killing it would cost the next run a fresh CUDA
        context), so its record is still written, as the version it was."""
        self._stopping = True
        if self._builder is not None:
            self._builder.cancel(Builder.job_key(Tier.BUILD, self.path))
        self.token.stop_processes()

    def cancel(self) -> None:
        """The user's cancel: stop now, the GPU worker too (a hanging kernel ends here)."""
        self._stopping = True
        self.token.on_cancel(self.session.stop_worker)
        self.stop()
        self.token.cancel()

    def execute(self) -> LoopResult:
        out = LoopResult(self.path, self.digest)
        try:
            self._builder = self.session.builder(self.path)
            for stage in self.plan.stages:
                if self._stopping:
                    raise Cancelled("a newer save")
                record = self._stage(stage)
                out.records[stage] = record
                self._emit(stage, "done", record=record)
                if record.level != "ok":
                    break  # wrong, or not judged here (no GPU): nothing to time or profile
                if stage is Stage.TIME:
                    remember_version(self.session, self.path, self.digest, record)
        except Cancelled:
            out.cancelled = True
        out.regression = regression(self.session.state_dir(self.path), str(self.path))
        return out

    def _stage(self, stage: Stage) -> RunRecord:
        self._emit(stage, "running")

        def step(name: str) -> None:
            self._emit(stage, "running", step=name)

        if stage is Stage.PROFILE:
            # The lens's per-line profile comes with it where the profiler has it (Session.profile).
            return self.session.profile(self.path, on_stage=step, cancel=self.token)
        return self.session.test(self.path, timing=stage is Stage.TIME, on_stage=step, cancel=self.token)

    def _emit(self, stage: Stage, state: str, *, step: str = "", record: RunRecord | None = None) -> None:
        self.on_event(Event(stage, state, time.monotonic(), step, record))


# -- what a run means next to the versions before it ---------------------------------------------------


@dataclass
class Regression:
    """The current version is worse than the last passing one: wrong where it passed, or slower beyond noise."""

    message: str  # "slower than the last passing version: 3.1 → 4.7 ms", "was pass, now mismatch · tail (…)"
    level: str  # "error" (wrong now) or "warning" (slower)
    baseline: RunRecord  # the last passing version's bench record


def regression(state, file: str) -> Regression | None:
    """Whether the newest test or bench of `file` regressed from the last passing (timed) version before it."""
    found = [r for r in (records.latest(state, file, "test"), records.latest(state, file, "bench"))
             if r is not None and not r.note]
    if not found:
        return None
    current = max(found, key=lambda r: r.time)
    last = last_passing(state, file, current)
    if last is None:
        return None
    if current.level == "error":
        return Regression(f"was pass, now {current.summary()}", "error", last)
    if current.kind == "bench" and current.passed and slower(last, current):
        return Regression(f"slower than the last passing version: {_ms(last)} → {_ms(current)} ms", "warning", last)
    return None


def last_passing(state, file: str, current: RunRecord) -> RunRecord | None:
    """The newest passing, timed version older than `current` and with another text."""
    for r in records.history(state, file, "bench"):
        other_text = current.source_digest is None or r.source_digest != current.source_digest
        if r.passed and r.timing is not None and r.time < current.time and other_text:
            return r
    return None


def slower(last: RunRecord, now: RunRecord) -> bool:
    """Slower beyond the interval the records carry: the new median's interval lies wholly above the old one's
    (the 95 % interval of the median where the harness stores it, else p10-p90) and by more than the floor. Both
    runs also timed eager: absolute times move with the card's clocks between runs (16 % between two timing
    methods on the H200), so the kernel must also have lost ground against eager timed beside it."""
    (_, last_high), (now_low, _) = _interval(last.timing), _interval(now.timing)
    if not (now_low > last_high and now.timing.median_ms > last.timing.median_ms * (1 + SLOWER_FLOOR)):
        return False
    before, after = last.speedup("eager"), now.speedup("eager")
    if before is None or after is None:
        return True
    paired = getattr(RunRecord, "speedup_interval", None)  # paired-round intervals, where the harness stores them
    spans = (paired(last, "eager"), paired(now, "eager")) if paired else (None, None)
    if spans[0] and spans[1]:
        return spans[1][1] < spans[0][0]
    return after < before * (1 - SLOWER_FLOOR)


def _interval(t) -> tuple[float, float]:
    low, high = getattr(t, "low_ms", None), getattr(t, "high_ms", None)
    return (low, high) if low is not None and high is not None else (t.p10_ms, t.p90_ms)


def _ms(r: RunRecord) -> str:
    return f"{r.timing.median_ms:.3g}"


def remember_version(session, path: Path, digest: str | None, record: RunRecord) -> None:
    """A passing, timed version joins the kernel's measured history, so Restore Best can bring it back."""
    from cutegen.agent.history import History

    timing = record.timing
    try:
        text = path.read_text()
    except OSError:
        return
    if records.text_digest(text) != digest or timing is None:
        return  # saved again meanwhile: which text was built is not known
    History(session.state_dir(path), path).record(
        {"action": "save", "verdict": record.verdict, "record": record.path},
        [(text, {"median_ms": timing.median_ms, "spread": timing.spread, "label": "saved version"})])


# -- where a failed verdict is shown ------------------------------------------------------------------


FAILURE_CODE = "cutegen-test"


def failure_diagnostic(record: RunRecord, text: str) -> Diagnostic | None:
    """A failed test as a diagnostic: at the line that takes the output the harness names ("output 1: ..."),
    else at the entry point (the launcher; a ModelNew's forward). None for a record that did not fail."""
    if record.level != "error":
        return None
    line = _output_line(text, record.message) or _entry_line(text)
    width = len(text.splitlines()[line - 1]) if text.splitlines() else 1
    return Diagnostic(file=record.file, line=line, col=1, end_col=max(2, width + 1), severity=Severity.ERROR,
                      message=f"{record.kind}: {record.summary()}", code=FAILURE_CODE, source="cutegen test",
                      root=record.message, explanation=_explanation(record))


def _output_line(text: str, message: str) -> int | None:
    m = re.match(r"output (\d+)\b", message or "")
    if not m:
        return None
    taken = re.compile(rf"\boutputs\s*\[\s*{m.group(1)}\s*\]")
    return next((i + 1 for i, line in enumerate(text.splitlines()) if taken.search(line)), None)


def _entry_line(text: str) -> int:
    lines = text.splitlines()
    for pattern in (r"\bcutegen_forward\s*\(", r"^\s*def\s+forward\s*\("):
        hit = next((i + 1 for i, line in enumerate(lines) if re.search(pattern, line)), None)
        if hit:
            return hit
    return 1


def _explanation(record: RunRecord) -> str:
    """The record's message, then the knowledge base's entry for the verdict and mismatch pattern."""
    parts = [f"**{record.verdict}**: {record.message}"]
    try:
        from cutegen.knowledge import KnowledgeBase
    except ImportError:
        return parts[0]
    kb = KnowledgeBase.load()
    mismatch = record.mismatch.to_json() if record.mismatch else None
    hits = kb.search(verdict=record.verdict, mismatch=mismatch, message=record.message, k=1)
    if hits:
        parts.append(kb.diagnosis_markdown(hits[0]))
    return "\n\n".join(parts)
