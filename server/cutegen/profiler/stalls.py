"""The profiler's names for why a warp did not issue: Nsight Compute's warp-stall reasons, as its per-PC sample
metrics spell them (`smsp__pcsamp_warps_issue_stalled_<reason>`), each with what it means.

The profiler owns these names; the knowledge base's per-stall advice (cute_knowledge/signals.yaml, `stalls:`) and
the hover import them (a schema test ties them together). The meanings follow Nsight Compute's Kernel Profiling
Guide, shortened to one line.
"""

from __future__ import annotations

STALL_METRIC = "smsp__pcsamp_warps_issue_stalled_"

MEANINGS = {
    "long_scoreboard": "waiting for an L1TEX result: global, local, texture or surface memory",
    "short_scoreboard": "waiting for an MIO result: shared memory, special math (MUFU) or a dynamic branch",
    "mio_throttle": "the MIO queue is full: too many shared-memory, special-math or dynamic-branch instructions",
    "lg_throttle": "the local/global memory queue is full: too many (narrow) global or local memory instructions",
    "tex_throttle": "the texture/L1TEX pipe's queue is full",
    "math_pipe_throttle": "the math pipe this instruction needs is busy: the kernel is compute-bound on it",
    "wait": "a fixed-latency dependency: the previous instruction's result is not ready yet",
    "barrier": "waiting at a barrier (__syncthreads) for the other warps of the CTA",
    "membar": "waiting for a memory barrier (fence) to complete",
    "branch_resolving": "waiting for a branch target to be computed or the warp to reconverge",
    "dispatch_stall": "the dispatcher could not issue the selected instruction (pipeline conflict)",
    "drain": "waiting for memory stores to drain at the warp's exit",
    "imc_miss": "an immediate-constant cache miss (a constant bank read not yet cached)",
    "no_instructions": "no instruction fetched: an instruction-cache miss or a jump to cold code",
    "not_selected": "eligible but another warp was picked: enough warps to hide latency (not a problem)",
    "selected": "the warp issued: the samples of useful work",
    "sleeping": "the warp sleeps (nanosleep, yield) or all its threads are blocked",
    "misc": "a rare reason Nsight Compute does not name",
    "warpgroup_arrive": "waiting at a warpgroup arrive/wait for asynchronous wgmma (Hopper tensor-core MMAs) to finish",
}

# Samples that are not a stall to fix: shown, but never the reason a line is named for.
NOT_A_PROBLEM = frozenset({"selected", "not_selected"})


def meaning(reason: str) -> str:
    return MEANINGS.get(reason, "a stall reason this cutegen version does not know")
