"""`cutegen` on the command line: the same engine and results as the language server."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cutegen import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cutegen", description="Compile, check, test and profile CuTe kernels.")
    parser.add_argument("--version", action="version", version=f"cutegen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="compile a .cu file and print condensed CuTe diagnostics")
    check.add_argument("file", type=Path)
    check.add_argument("--json", action="store_true", help="print the check result as JSON")
    check.add_argument("--tier", choices=["check", "build"], default="check")
    check.add_argument("--verbose", "-v", action="store_true", help="also print resource usage and the explanation")
    _toolchain_options(check)
    check.set_defaults(run=_cmd_check)

    for name, help_text in (("test", "verify a kernel against its PyTorch reference on the GPU"),
                            ("bench", "verify, then time the kernel against eager PyTorch and torch.compile")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("file", type=Path)
        p.add_argument("--problem", help="the reference problem (default: directive comment, then sibling .py)")
        p.add_argument("--trials", type=int, default=5)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as hung")
        p.add_argument("--json", action="store_true")
        _toolchain_options(p)
        p.set_defaults(run=_cmd_verify, timing=name == "bench")

    prof = sub.add_parser("profile", help="profile a kernel with Nsight Compute: metrics, bottleneck, signals")
    prof.add_argument("file", type=Path)
    prof.add_argument("--problem")
    prof.add_argument("--reference", action="store_true", help="profile the PyTorch reference instead (a baseline)")
    prof.add_argument("--json", action="store_true")
    _toolchain_options(prof)
    prof.set_defaults(run=_cmd_profile)

    from cutegen.agent.commands import add_parsers

    add_parsers(sub, _toolchain_options)  # diagnose, fix, optimize, tune, restore-best, generate

    lsp = sub.add_parser("lsp", help="start the language server (stdio by default)")
    lsp.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio (for debugging)")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for LSP clients)")
    lsp.add_argument("--host", default="127.0.0.1")
    lsp.add_argument("--port", type=int, default=2087)
    lsp.set_defaults(run=_cmd_lsp)

    args = parser.parse_args(argv)
    return args.run(args)


def _toolchain_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nvcc", help="path of nvcc (default: CUDA_HOME, then PATH)")
    p.add_argument("--arch", help="target, e.g. sm_90a (default: the local GPU, else sm_90a)")
    p.add_argument("--cutlass-path", help="CUTLASS include dir (default: CUTLASS_PATH, then the nvidia-cutlass wheel)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], help="extra include directory")
    p.add_argument("--state-dir", type=Path, default=Path(".cutegen"), help="where caches and run records go")


def _engine(args, err):
    """The builder for these options, or None after printing why not (missing file, toolchain)."""
    from cutegen.build import Builder
    from cutegen.settings import Settings
    from cutegen.toolchain import ToolchainError, discover

    if not args.file.is_file():
        err.print(f"[red]error:[/] {args.file}: no such file")
        return None
    settings = Settings(nvcc=args.nvcc, arch=args.arch, cutlass_path=args.cutlass_path, include_dirs=args.include_dirs)
    try:
        return Builder(discover(settings), settings, args.state_dir)
    except ToolchainError as e:
        err.print(f"[red]error:[/] {e}")
        return None


def _cmd_check(args) -> int:
    from rich.console import Console

    from cutegen import records
    from cutegen.build import Tier
    from cutegen.model import Severity

    err = Console(stderr=True, soft_wrap=True)
    builder = _engine(args, err)
    if builder is None:
        return 2
    with err.status(f"compiling {args.file.name} ({builder.toolchain.arch}, nvcc {builder.toolchain.nvcc_version})") as status:
        result = builder.run(Tier(args.tier), args.file, on_stage=lambda s: status.update(f"{s}: {args.file.name}"))
    record = records.write(args.state_dir, args.tier, result.file, {"result": result.to_json()})

    if args.json:
        print(json.dumps({**result.to_json(), "record": str(record)}, indent=1))
    else:
        shown = [d for d in result.diagnostics if d.severity is not Severity.INFO or args.verbose]
        for d in shown:
            print(d.format(relative_to=Path.cwd()))
            if args.verbose and d.explanation:
                print("    " + d.explanation.replace("\n\n", "\n    "))
        for k in result.resources:
            err.print(f"[dim]resources: {k.summary()}[/]")
        state = "cached" if result.cached else f"{result.seconds:.1f} s"
        verdict = "[green]ok[/]" if result.ok else f"[red]{len(result.errors)} error(s)[/]"
        err.print(f"{verdict} · {result.tier} tier · {state} · raw log in {record}")
    return 0 if result.ok else 1


def _cmd_verify(args) -> int:
    from rich.console import Console

    from cutegen.harness.verify import verify_kernel
    from cutegen.harness.worker import Worker

    err = Console(stderr=True, soft_wrap=True)
    builder = _engine(args, err)
    if builder is None:
        return 2
    builder.settings.test_timeout = args.timeout
    worker = Worker()
    try:
        with err.status(f"{args.file.name}: starting") as status:
            record = verify_kernel(args.file, builder, worker, problem=args.problem, trials=args.trials, seed=args.seed,
                                   timing=args.timing, baselines=("eager", "compile") if args.timing else (),
                                   state_dir=args.state_dir, on_stage=lambda s: status.update(f"{args.file.name}: {s}"))
    finally:
        worker.stop()
    if args.json:
        print(json.dumps(record, indent=1, default=str))
    else:
        _print_verdict(record, err)
    return 0 if record["verdict"] == "pass" else 1


def _print_verdict(record: dict, err) -> None:
    color = "green" if record["verdict"] == "pass" else ("yellow" if record["verdict"] == "not-run" else "red")
    print(f"{record['kernel']}: {record['verdict']}: {record['message']}")
    if "timing" in record:
        t, tp = record["timing"], record["throughput"]
        line = f"  kernel {t['median_ms']:.4f} ms (spread {t['spread']:.1%}, {t['trials']} trials)"
        line += f" · {tp['gb_per_s']:.0f} GB/s = {tp['bandwidth_share']:.0%} of 4.30 TB/s"
        if "tflop_per_s" in tp:
            line += f" · {tp['tflop_per_s']:.1f} TFLOP/s = {tp['compute_share']:.0%} of peak"
        print(line)
        for key, label in (("eager", "eager PyTorch"), ("torch_compile", "torch.compile")):
            if key in record:
                speed = record["speedup_vs_eager" if key == "eager" else "speedup_vs_compile"]
                print(f"  {label}: {record[key]['median_ms']:.4f} ms → {speed:.2f}×")
        if record.get("suspicious"):
            print(f"  note: {record['suspicious']}")
    err.print(f"[{color}]{record['verdict']}[/] · run record {record['record']}")


def _cmd_profile(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from cutegen.harness.worker import Worker
    from cutegen.profiler import profile_kernel

    err = Console(stderr=True, soft_wrap=True)
    builder = _engine(args, err)
    if builder is None:
        return 2
    worker = Worker()
    try:
        with err.status(f"{args.file.name}: profiling") as status:
            record = profile_kernel(args.file, builder, worker, problem=args.problem, state_dir=args.state_dir,
                                    reference=args.reference, on_stage=lambda s: status.update(f"{args.file.name}: {s}"))
    finally:
        worker.stop()
    if args.json:
        print(json.dumps(record, indent=1, default=str))
        return 0 if record["verdict"] == "profiled" else 1
    print(f"{record['kernel']}: {record['verdict']}: {record['message']}")
    if record["verdict"] == "profiled":
        out = Console(soft_wrap=True)
        table = Table("kernel", "time", "SM %", "mem %", "DRAM %", "occupancy %", "regs", "waves", "tensor %")
        for m in record["metrics"]:
            table.add_row(str(m["kernel"])[:48], f"{(m['time_ns'] or 0) / 1e3:.1f} µs", _pct(m["sm_pct"]),
                          _pct(m["memory_pct"]), _pct(m["dram_pct"]), _pct(m["achieved_occupancy_pct"]),
                          str(m["registers_per_thread"]), _pct(m["waves_per_sm"]), _pct(m["tensor_pipe_pct"]))
        out.print(table)
        out.print(f"Speed of Light: {record['classification']['sol']}")
        for s in record["signals"]:
            out.print(f"  • [bold]{s['name']}[/]: {s['evidence']}")
        err.print(f"report (opens in Nsight Compute): {record['report']}")
    return 0 if record["verdict"] == "profiled" else 1


def _pct(v) -> str:
    return f"{v:.1f}" if isinstance(v, (int, float)) else "–"


def _cmd_lsp(args) -> int:
    try:
        from cutegen.lsp.server import serve
    except ImportError as e:
        print(f"error: {e}: the language server needs pygls; reinstall CuTeGen (pip install .)", file=sys.stderr)
        return 2
    return serve(tcp=args.tcp, host=args.host, port=args.port)
