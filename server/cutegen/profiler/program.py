"""Any program profiled or sanitized: the user's own binary, benchmark or `python train.py` that calls their
extension, not only a kernel behind our ABI. Nsight Compute runs the command with a kernel filter (a name or a
regex) and a bound on the launches it profiles; the per-PC samples fold onto the user's source lines as for ABI
kernels (profiler/lines.py): through the program's line tables where its binary is given or is the command
itself, else through Nsight's own innermost places. compute-sanitizer runs it the same way.

The user's own command runs unjailed, as the user would run it (model-written code is never run here).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cutegen.profiler.lines import Folder, _line_tables, fold, read_report, system_folders
from cutegen.profiler.profile import LINE_ARGS, LINE_SECTIONS

_ELF = b"\x7fELF"


@dataclass
class ProgramRun:
    argv: list[str]
    problem: str = ""  # why there is no profile (ncu missing or failing, no kernel matched); "" when there is one
    lines: dict | None = None  # records.LineProfile's JSON
    report: str | None = None  # the .ncu-rep, for Nsight Compute's GUI
    findings: list[dict] = field(default_factory=list)  # the sanitizer's, at user lines
    output: str = ""  # the tool's and the program's output, its tail kept
    record: str | None = None  # the run record holding the line profile (the editor's hot lines read it)


def ncu_command(ncu: str, argv: list[str], report: Path, kernel: str | None, launches: int) -> list[str]:
    """`kernel`: a kernel's name, or `regex:...`; `launches`: how many matching launches are profiled (each
    one replays the kernel dozens of times: a bound keeps a long program's profile short)."""
    chosen = ["-k", kernel if kernel.startswith("regex:") else f"regex:{kernel}"] if kernel else []
    sections = [a for s in ("SpeedOfLight", *LINE_SECTIONS) for a in ("--section", s)]
    return [ncu, "--clock-control", "none", *chosen, "-c", str(launches), *sections, *LINE_ARGS, "-f", "-o",
            str(report.with_suffix("")), *argv]


def binary_of(argv: list[str], cwd: Path, given: str | None = None) -> Path | None:
    """The ELF file whose line tables map the profile: `given`, else the command itself when it is one (a
    benchmark executable; `python script.py` is not, and needs the extension's .so as `given`)."""
    candidates = [given] if given else [argv[0] if os.sep in argv[0] else shutil.which(argv[0]) or argv[0]]
    for name in candidates:
        path = (cwd / name).resolve()
        try:
            with open(path, "rb") as f:
                if f.read(4) == _ELF:
                    return path
        except OSError:
            continue
    return None


def folder_for(toolchain, library_dirs: tuple[str, ...] = (), roots: tuple[Path | None, ...] = ()) -> Folder:
    """User lines are every file outside CUTLASS, CUDA, the system's and the project's library folders; a relative
    or bare source name is looked for under `roots` (the program's working folder, its binary's folder)."""
    extra = tuple(os.path.realpath(d) + os.sep for d in library_dirs)
    found = tuple(dict.fromkeys(str(r) for r in roots if r is not None))
    return Folder(aliases={}, system=system_folders(toolchain) + extra, roots=found)


def profile_program(argv: list[str], *, cwd: Path, report: Path, toolchain, ncu: str, kernel: str | None = None,
                    launches: int = 1, binary: str | None = None, timeout: float = 300,
                    library_dirs: tuple[str, ...] = ()) -> ProgramRun:
    run = ProgramRun(argv, report=str(report))
    report.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(ncu_command(ncu, argv, report, kernel, launches), cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        run.problem = f"ncu did not finish within {timeout:g} s"
        return run
    run.output = (done.stdout + done.stderr)[-4000:]
    if not report.is_file():
        matched = f" matching {kernel}" if kernel else ""
        run.problem = (f"ncu profiled no kernel{matched} (exit {done.returncode}): "
                       + (" ".join(run.output.strip().splitlines()[-2:]) or "no output"))
        return run
    elf = binary_of(argv, cwd, binary)
    tables, table_problem = _line_tables(elf, toolchain) if elf else ({}, "no binary with line tables was given "
                                                                          "(--binary): Nsight's own places are used")
    data = read_report(report, ncu, timeout=timeout)
    if "error" in data:
        run.problem = data["error"]
        return run
    run.lines = fold(data, tables, folder_for(toolchain, library_dirs, (cwd, elf and elf.parent)), table_problem)
    return run


def file_lines(state, run: ProgramRun) -> Path:
    """Files a program's line profile as the workspace's program record (state.StateDir.program_record), where the
    editor's profile lens reads it: the hot lines land in the program's sources as an ABI kernel's do."""
    from cutegen import records

    return records.write(state, "profile", state.program_record, {
        "verdict": "profiled", "message": f"the lines of {' '.join(run.argv)}", "lines": run.lines,
        "program": run.argv, "report": run.report})


def sanitize_program(argv: list[str], *, cwd: Path, sanitizer: str, toolchain, tool: str = "memcheck",
                     binary: str | None = None, timeout: float = 300, library_dirs: tuple[str, ...] = ()) -> ProgramRun:
    """compute-sanitizer's `tool` on the command; its reports condensed to findings at user lines."""
    from cutegen.profiler.sanitizer import PRINT_LIMIT, TOOL_ARGS
    from cutegen.profiler.sanitizer_output import condense, parse

    command = [sanitizer, "--tool", tool, "--print-limit", str(PRINT_LIMIT), "--show-backtrace", "device",
               *TOOL_ARGS[tool], *argv]
    run = ProgramRun(argv)
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        run.problem = f"compute-sanitizer did not finish within {timeout:g} s"
        return run
    run.output = (done.stdout + done.stderr)[-4000:]
    reports, _ = parse(done.stdout + done.stderr, tool)
    elf = binary_of(argv, cwd, binary)
    tables = _line_tables(elf, toolchain)[0] if elf else {}
    run.findings, unplaced = condense(reports, folder_for(toolchain, library_dirs, (cwd, elf and elf.parent)), tables)
    if not run.findings and unplaced:  # reports, none at a line of the user's: say so, never "found nothing"
        run.problem = (f"compute-sanitizer's {tool} reported {len(unplaced)} error(s) with no line in your sources "
                       f"(build with -lineinfo for lines): {unplaced[0]}")
    elif not reports and "========= Error" in run.output:  # the sanitizer itself failed (the program did not start)
        run.problem = "compute-sanitizer failed: " + next(line.removeprefix("========= ").strip() for line in
                                                          run.output.splitlines() if "========= Error" in line)
    return run
