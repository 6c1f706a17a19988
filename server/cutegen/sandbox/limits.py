"""Resource limits, applied by our own code inside the jail before any candidate code runs.

    python -m cutegen.sandbox.limits --cpu S --memory B --file-size B --processes N -- PROGRAM ARGS...

sets the limits and execs PROGRAM (nvcc, ncu). The sandboxed GPU worker applies them itself at start.
`--memory 0` sets no RLIMIT_DATA: the jail's memory cgroup holds the cap (see cutegen.sandbox.cgroup).
The kernel exempts real root from the process-count limit (RLIMIT_NPROC); the pids cgroup, the PID
namespace and the caller's wall-clock timeout, which kills the whole namespace, still bound a fork bomb.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from typing import NoReturn

_KINDS = {"cpu": resource.RLIMIT_CPU, "memory": resource.RLIMIT_DATA, "file_size": resource.RLIMIT_FSIZE,
          "processes": resource.RLIMIT_NPROC}


def apply(*, cpu: int, memory: int, file_size: int, processes: int) -> None:
    """Lower each limit (never raise one above what the caller already had)."""
    for name, value in (("cpu", cpu), ("memory", memory), ("file_size", file_size), ("processes", processes)):
        if name == "memory" and value <= 0:
            continue
        kind = _KINDS[name]
        soft, hard = resource.getrlimit(kind)
        new = value if hard == resource.RLIM_INFINITY else min(value, hard)
        # CPU: the soft limit a second early, so SIGXCPU (named in the verdict) comes before the hard SIGKILL
        resource.setrlimit(kind, (max(1, new - 1) if name == "cpu" else new, new))


def cpu_budget(seconds: float) -> None:
    """Give the next request `seconds` more CPU time (soft limit) under the lifetime hard limit: a warm
    worker's CPU time adds up over many requests; one spinning request hits SIGXCPU."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = int(spent + seconds) + 1
    soft = want if hard == resource.RLIM_INFINITY else max(1, min(want, hard - 1))
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def main(argv: list[str] | None = None) -> NoReturn:
    ap = argparse.ArgumentParser(prog="python -m cutegen.sandbox.limits")
    for name in ("cpu", "memory", "file-size", "processes"):
        ap.add_argument(f"--{name}", type=int, required=True)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        ap.error("no program to run")
    apply(cpu=args.cpu, memory=args.memory, file_size=args.file_size, processes=args.processes)
    os.execvp(program[0], program)


if __name__ == "__main__":
    sys.exit(main())
