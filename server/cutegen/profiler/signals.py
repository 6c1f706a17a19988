"""The profiler's vocabulary: the signals `classify.py` raises and the verdicts of a profile and a sanitizer run.

The profiler owns these names; the knowledge base's menu and recognizers import them.
"""

from __future__ import annotations

from enum import Enum

# The NVTX range the profile driver opens around the timed call and ncu is told to capture (`--nvtx-include`):
# here, not in driver.py, so that the profiler imports it without importing torch.
NVTX_RANGE = "cutegen_profile"


class Signal(str, Enum):
    REGISTER_PRESSURE = "register-pressure"
    SPILLS = "spills"
    UNDER_ONE_WAVE = "under-one-wave"
    UNCOALESCED_GLOBAL = "uncoalesced-global"
    SMEM_BANK_CONFLICTS = "smem-bank-conflicts"
    LONG_SCOREBOARD_STALLS = "long-scoreboard-stalls"
    TENSOR_PIPES_IDLE = "tensor-pipes-idle"
    WGMMA_SERIALIZED = "wgmma-serialized"
    LOW_OCCUPANCY = "low-occupancy"
    MEMORY_BOUND_BELOW_ROOFLINE = "memory-bound-below-roofline"
    COMPUTE_BOUND = "compute-bound"
    LATENCY_BOUND = "latency-bound"
    MMA_SYNC_NOT_WGMMA = "mma-sync-not-wgmma"


class ProfileVerdict(str, Enum):
    PROFILED = "profiled"
    NO_PROBLEM = "no-problem"
    NCU_MISSING = "ncu-missing"
    BUILD_FAILED = "build-failed"
    NOT_RUN = "not-run"
    NCU_TIMEOUT = "ncu-timeout"
    NCU_FAILED = "ncu-failed"
    NO_COUNTER_PERMISSION = "no-counter-permission"
    KERNEL_NOT_FOUND = "kernel-not-found"

    @property
    def level(self) -> str:
        if self is ProfileVerdict.PROFILED:
            return "ok"
        return "info" if self in (ProfileVerdict.NOT_RUN, ProfileVerdict.NO_PROBLEM) else "error"


class SanitizeVerdict(str, Enum):
    """How `cutegen sanitize` ended (profiler/sanitizer.py)."""

    CLEAN = "clean"
    ERRORS = "sanitizer-errors"
    SANITIZER_MISSING = "sanitizer-missing"
    BUILD_FAILED = "build-failed"
    NOT_RUN = "not-run"
    NO_PROBLEM = "no-problem"
    TIMEOUT = "sanitizer-timeout"
    FAILED = "sanitizer-failed"

    @property
    def level(self) -> str:
        if self is SanitizeVerdict.CLEAN:
            return "ok"
        return "info" if self in (SanitizeVerdict.NOT_RUN, SanitizeVerdict.NO_PROBLEM) else "error"
