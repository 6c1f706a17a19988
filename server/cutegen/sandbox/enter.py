"""The first step of every jail, run outside it as `python -I -S enter.py [--join PROCS]... --seccomp HEX --
BWRAP ARGS...` (standard library only, so it starts in milliseconds and needs no import path).

It joins the jail's cgroups (so bwrap and everything under it count against the memory and process caps),
puts the seccomp program in a memory file bwrap reads (`--seccomp FD`), and execs bwrap with an EMPTY
environment. That last part matters: inside the jail PID 1 is bwrap itself, and any jailed process can read
its environment from /proc/1/environ; `--clearenv` cleans only bwrap's child. The caller's environment (the
LLM key among it) therefore never reaches a process the jail can see.
"""

import os
import sys


def main(argv: list[str]) -> None:
    joins, program, i = [], b"", 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--join":
            joins.append(argv[i + 1])
        elif argv[i] == "--seccomp":
            program = bytes.fromhex(argv[i + 1])
        else:
            _fail(f"unknown option {argv[i]!r}")
        i += 2
    bwrap = argv[i + 1:]
    if not bwrap:
        _fail("no bwrap command")
    for procs in joins:
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            _fail(f"cannot join the sandbox's cgroup {os.path.dirname(procs)}: {e.strerror}")
    if program:
        fd = os.memfd_create("cutegen-seccomp", 0)  # no MFD_CLOEXEC: bwrap inherits it
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        bwrap = [bwrap[0], "--seccomp", str(fd), *bwrap[1:]]
    try:
        os.execve(bwrap[0], bwrap, {})
    except OSError as e:
        _fail(f"cannot start {bwrap[0]}: {e.strerror}")


def _fail(why: str) -> None:
    sys.stderr.write(f"cutegen sandbox: {why}\n")
    sys.exit(125)


if __name__ == "__main__":
    main(sys.argv[1:])
