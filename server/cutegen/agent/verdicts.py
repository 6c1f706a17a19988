"""The agent's vocabulary: how a candidate's verification ends, and how a round of the loop ends when no candidate
was verified. The agent owns these names; its consumers (the suite's rows, transcripts' readers, tests) import
them. A leaf: it imports nothing of cutegen, so a reader of rows or transcripts imports it cheaply.
"""

from __future__ import annotations

from enum import Enum


class CandidateVerdict(str, Enum):
    """How a candidate's verification ended, when the judge's own verdict (harness/verdicts.py, passed through as
    it came) is not the end: the tiers before it, the comparison after it, or the verification itself failing."""

    VERIFIED = "verified"
    CHECK_FAILED = "check-failed"
    BUILD_FAILED = "build-failed"
    REFUSED = "refused"  # the static gate or the library inspection
    NOT_FASTER = "not-faster"
    CANCELLED = "cancelled"
    JUDGE_ERROR = "judge-error"  # the verification raised: a bug of ours, named rather than escaping to the editor

    def __str__(self) -> str:  # printed and formatted as its name, as the strings it replaces were
        return self.value


class RoundVerdict(str, Enum):
    """A round of the loop (an AgentResult's `rounds`) that verified no candidate: its verdict is one of these, else the
    candidate's (a CandidateVerdict, or the judge's Verdict)."""

    PATCH_REJECTED = "patch-rejected"  # the reply's edit could not be read or placed
    LLM_ERROR = "llm-error"  # the endpoint gave no usable reply
    TOOL = "tool"  # one call of a tool-calling session (agent/tools.py)

    def __str__(self) -> str:
        return self.value


class DiagnoseVerdict(str, Enum):
    """A diagnose record's verdict."""

    DIAGNOSED = "diagnosed"
    NO_DIAGNOSIS = "no-diagnosis"

    def __str__(self) -> str:
        return self.value
