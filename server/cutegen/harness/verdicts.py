"""The harness's vocabulary: every verdict a test or bench can end with, and every mismatch pattern.

The harness owns these names; the knowledge base, the language server, the CLI and the editor extension
import them (the extension gets each verdict's level from the server's reply). No torch here: consumers
that only read records import this module cheaply.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Verdict(str, Enum):
    PASS = "pass"
    # the kernel is wrong or cheats (gpu_checks.py, modelnew.py)
    MISMATCH = "mismatch"
    CONSTANT_OUTPUT = "constant-output"
    INPUTS_MUTATED = "inputs-mutated"
    # stream order, judged as a PyTorch program calls (calls.py): the direction is in the name
    INPUTS_NOT_AWAITED = "inputs-not-awaited"  # read its inputs before the caller's stream had written them
    RESULT_NOT_READY = "result-not-ready"  # still writing its outputs when the caller's stream read them
    OTHER_STREAM = "other-stream"  # both: its work is unordered with the caller's stream either way
    CACHED_RESULTS = "cached-results"
    OUTPUT_ALIASES_INPUT = "output-aliases-input"
    TIMED_CALLS_WRONG = "timed-calls-wrong"  # right when checked, wrong (less work) when timed (trial.check_timed)
    FASTER_THAN_HARDWARE = "faster-than-hardware"  # a time below what the card's bandwidth and peak allow
    CANDIDATE_PROTOCOL = "candidate-protocol"  # the candidate process sent what the judge does not take (remote.py)
    # what a ModelNew returns must be a plain tensor whose memory holds the values (modelnew.py)
    LAZY_OUTPUT = "lazy-output"  # a torch.Tensor subclass, or a tensor without real storage
    EXPANDED_OUTPUT = "expanded-output"  # a stride-0 / expanded or overlapping view: elements share memory
    LAUNCH_ERROR = "launch-error"
    CUDA_ERROR = "cuda-error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    OUT_OF_MEMORY = "out-of-memory"
    BUILD_FAILED = "build-failed"
    ERROR = "error"
    # nothing was judged (run.py, worker.py)
    NOT_RUN = "not-run"
    NO_PROBLEM = "no-problem"
    PROBLEM_ERROR = "problem-error"

    @property
    def judged(self) -> bool:
        """False when the kernel was not (fully) run: no GPU, no paired problem, a broken problem."""
        return self not in NOT_JUDGED

    @property
    def level(self) -> str:
        """How an editor shows it: "ok", "info" (not judged) or "error"."""
        return "ok" if self is Verdict.PASS else ("info" if not self.judged else "error")


NOT_JUDGED = frozenset({Verdict.NOT_RUN, Verdict.NO_PROBLEM, Verdict.PROBLEM_ERROR})


class MismatchPattern(str, Enum):
    """How the wrong elements of an output are laid out (compare.py recognizes them)."""

    TAIL = "tail"
    ROW_TAIL = "row-tail"
    PERIODIC = "periodic"
    TILE_BLOCKS = "tile-blocks"
    EVERYTHING = "everything"
    NAN = "nan"
    SCATTERED = "scattered"
    SHAPE = "shape"
    DTYPE = "dtype"
    TYPE = "type"
    DEVICE = "device"


@dataclass
class Mismatch:
    """What compare() found wrong in one output: a report a person can act on."""

    message: str  # one line: what is wrong, how much, where
    pattern: str  # a MismatchPattern value
    bad: int = 0
    total: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    first_bad_index: list[int] | None = None
    expected: float | None = None  # at the first bad index
    got: float | None = None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Mismatch":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


class Failed(Exception):
    """A failed check, raised where it is seen: `verdict` names it, `message` says what was seen."""

    def __init__(self, verdict: Verdict, message: str, **details):
        super().__init__(message)
        self.verdict, self.message, self.details = Verdict(verdict), message, details

    def to_json(self) -> dict:
        return {"verdict": self.verdict.value, "message": self.message, **self.details}


def parse(name: object) -> Verdict | None:
    """The Verdict called `name`, or None for a name this version does not know."""
    try:
        return Verdict(name)
    except ValueError:
        return None
