"""`cutegen profile` (kernel-level figures, and with --lines the per-line profile of the same ncu run) and
`cutegen sanitize` (compute-sanitizer's four tools, printed like compile errors): the profile lens in a terminal."""

from __future__ import annotations

from pathlib import Path

from cutegen.cli import present
from cutegen.cli.options import command, console, session, settings, toolchain_options
from cutegen.profiler.signals import ProfileVerdict, SanitizeVerdict
from cutegen.records import LineProfile, RunRecord
from cutegen.settings import Settings

DEFAULTS = Settings()


def add_parsers(sub) -> None:
    prof = command(sub, "profile", "profile a kernel with Nsight Compute: metrics, bottleneck, signals, hot lines; "
                                   "or any program: cutegen profile --lines -- ./bench --size 4096")
    prof.add_argument("file", type=Path, nargs="?", help="the kernel (or give a program after --)")
    program_options(prof)
    prof.add_argument("--problem", help="the reference problem (default: the directive comment, then a sibling .py)")
    prof.add_argument("--reference", action="store_true", help="profile the PyTorch reference instead (a baseline)")
    prof.add_argument("--lines", action="store_true",
                      help="also the per-line profile (same ncu run): the hottest source lines, their stall reasons")
    prof.add_argument("--top", type=int, default=5, help="hot lines to print with --lines")
    prof.add_argument("--ncu", help="path of Nsight Compute's ncu (default: PATH, then CUDA's bin/)")
    prof.add_argument("--timeout", type=float, default=DEFAULTS.profile_timeout, help="seconds before ncu is stopped")
    prof.add_argument("--json", action="store_true", help="print the run record as JSON (with --lines: its lines)")
    toolchain_options(prof)
    prof.set_defaults(run=_profile)

    san = command(sub, "sanitize", "run compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on one call "
                                   "of a kernel and print its errors at their lines")
    san.add_argument("file", type=Path, nargs="?", help="the kernel (or give a program after --)")
    program_options(san)
    san.add_argument("--problem", help="the reference problem whose inputs the call gets")
    san.add_argument("--tool", action="append", choices=["memcheck", "racecheck", "initcheck", "synccheck"],
                     help="run only this tool (repeatable; default: all four)")
    san.add_argument("--timeout", type=float, default=DEFAULTS.profile_timeout,
                     help="seconds before one tool's run is stopped")
    san.add_argument("--json", action="store_true", help="print the run record as JSON")
    toolchain_options(san)
    san.set_defaults(run=_sanitize)


def program_options(p) -> None:
    p.add_argument("--kernel", help="with a program: profile only kernels whose name matches (a name or regex:...)")
    p.add_argument("--launches", type=int, default=1, help="with a program: how many matching launches to profile")
    p.add_argument("--binary", help="with a program: the executable or extension .so holding the kernels (default: "
                                    "the command itself when it is an executable)")


def _profile(args) -> int:
    from cutegen.cli.run import run_action

    if getattr(args, "program", None) or args.file is None:
        return _program(args, sanitize=None)
    err = console()
    s = session(args, err, settings(args, problem=args.problem, ncu=args.ncu, profile_timeout=args.timeout), args.file)
    if s is None:
        return 2
    record = run_action(args, s, err, "profiling", lambda path, stage: s.profile(
        path, reference=args.reference, lines=args.lines, on_stage=stage))
    if not args.json:
        present.profile(record, err)
        if args.lines and record.verdict == ProfileVerdict.PROFILED:
            lines_table(record, args.top, err)
    return 0 if record.verdict == ProfileVerdict.PROFILED else 1


def lines_table(r: RunRecord, top: int, err) -> None:
    """One block per hot line (readable at any terminal width): place, share, samples, the top stall reasons, the
    code, the counters, Nsight's marker."""
    if r.lines is None:
        err.print(f"[yellow]no per-line profile:[/] {r.details.get('lines_problem', 'not collected')}")
        return
    print(f"hot lines of {', '.join(r.lines.kernels) or 'the kernel'}:")
    for h in r.lines.hottest(top):
        stalls = ", ".join(f"{name} {count / h.samples * 100:.0f} %" for name, count in h.top_stalls(3)) if h.samples else ""
        print(f"  {Path(h.file).name}:{h.line:<5} {h.share * 100:5.1f} %  {h.samples:>10,} samples  {stalls}")
        print(f"      {h.text}")
        counters = [f"{h.executed:,} warp instructions"]
        counters += [f"{h.excess_sectors:,} excess L2 sectors"] if h.excess_sectors else []
        counters += [f"{h.excess_wavefronts:,} excess shared wavefronts"] if h.excess_wavefronts else []
        print(f"      {' · '.join(counters)}")
        for m in h.markers[:1]:
            print(f"      Nsight Compute: {m[:200]}")
    print(coverage(r.lines))


def coverage(lines: LineProfile) -> str:
    how = ("inlined CuTe code charged to the user line that called it" if lines.attribution == "inlined-at"
           else "Nsight's innermost place only: " + (lines.note or "no line table"))
    return (f"{lines.user_share * 100:.1f} % of {lines.total_samples:,} samples on user lines ({how})")


def _program(args, sanitize: str | None) -> int:
    """`cutegen profile|sanitize [options] -- CMD...`: the user's own program, its hot lines or findings."""
    from cutegen.session import Session
    from cutegen.toolchain import ToolchainError

    err = console()
    if not args.program:
        err.print("[red]error:[/] give a kernel file, or a program after -- (cutegen profile --lines -- ./bench)")
        return 2
    s = Session(settings(args, profile_timeout=args.timeout, ncu=getattr(args, "ncu", None)), state_dir=args.state_dir)
    try:
        with err.status(f"{'sanitizing' if sanitize else 'profiling'} {' '.join(args.program)}"):
            run = s.profile_program(args.program, Path.cwd(), kernel=args.kernel, launches=args.launches,
                                    binary=args.binary, sanitize=sanitize)
    except ToolchainError as e:
        err.print(f"[red]error:[/] {e}")
        return 2
    finally:
        s.close()
    if run.problem:
        err.print(f"[red]{run.problem}[/]")
        return 1
    if sanitize:
        for f in run.findings:
            print(f"{present.shown_path(f['file'])}:{f['line']}:1: error: {sanitize}: {f['message']}")
        err.print(f"{len(run.findings)} finding(s) at user lines")
        return 1 if run.findings else 0
    lines = LineProfile.from_json(run.lines)
    print(f"hot lines of {', '.join(lines.kernels) or 'the kernels'} (report {run.report}):")
    for h in lines.hottest(args.top):
        print(f"  {present.shown_path(h.file)}:{h.line:<5} {h.share * 100:5.1f} %  {h.samples:>10,} samples")
        print(f"      {h.text}")
    print(coverage(lines))
    return 0


def _sanitize(args) -> int:
    from cutegen.cli.run import run_action

    if getattr(args, "program", None) or args.file is None:
        return _program(args, sanitize=(args.tool or ["memcheck"])[0])
    err = console()
    s = session(args, err, settings(args, problem=args.problem, profile_timeout=args.timeout), args.file)
    if s is None:
        return 2
    tools = tuple(dict.fromkeys(args.tool)) if args.tool else None
    record = run_action(args, s, err, "sanitizing", lambda path, stage: s.sanitize(path, tools=tools, on_stage=stage))
    if not args.json:
        sanitizer_errors(record, err)
    verdict = record.verdict
    return 0 if verdict == SanitizeVerdict.CLEAN else 1 if verdict == SanitizeVerdict.ERRORS else 2


def sanitizer_errors(r: RunRecord, err) -> None:
    """Like compile errors: `file:line:1: error: memcheck: ...`, the evidence indented below, then the summary."""
    for d in r.diagnostics:
        print(d.format(relative_to=Path.cwd()))
        for rel in d.related:
            where = f"{Path(rel.file).name}:{rel.line}: " if (rel.file, rel.line) != (d.file, d.line) else ""
            print(f"    {where}{rel.message}")
    for text in (r.sanitizer.unplaced if r.sanitizer else [])[:5]:
        print(f"  (no user line) {text}")
    color = {"ok": "green", "info": "yellow"}.get(r.level, "red")
    err.print(f"[{color}]{r.summary()}[/]" + ("" if r.passed else f": {r.message}") + f" · run record {r.path}")
