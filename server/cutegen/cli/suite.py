"""`cutegen suite run|report`: the engine over a whole benchmark (see cutegen.suite)."""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
from pathlib import Path

LLM_ENV = {"llm_base_url": "CUTEGEN_LLM_BASE_URL", "llm_model": "CUTEGEN_LLM_MODEL"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    from cutegen.cli.agent import search_shape
    from cutegen.cli.options import command, reference_mode_option, retry_count

    suite = command(subparsers, "suite", "judge or generate kernels for a whole benchmark, with a report")
    sub = suite.add_subparsers(dest="suite_command", required=True)

    run = command(sub, "run", "run every problem (KernelBench files or folders) not yet done in --out")
    run.add_argument("problems", nargs="+", type=Path, help="problem files or folders (e.g. KernelBench/level1)")
    mode = run.add_mutually_exclusive_group(required=True)
    mode.add_argument("--kernels", type=Path,
                      help="judge the kernels in DIR: NAME.cu (kernel ABI) or NAME.py (ModelNew)")
    mode.add_argument("--agent", action="store_true", help="generate, fix and optimize a kernel per problem (LLM)")
    run.add_argument("--out", type=Path, required=True, help="results folder (results.jsonl; a rerun resumes)")
    run.add_argument("--state-dir", type=Path, help="build cache and run records (default: OUT/.cutegen)")
    run.add_argument("--profile", action="store_true", help="also profile each correct kernel (Nsight Compute)")
    run.add_argument("--gpus", help="GPU indices to use, e.g. 0,1 (default: every GPU of this machine)")
    run.add_argument("--ray", metavar="ADDRESS", help="run the GPU jobs on a Ray cluster (an address, or auto)")
    run.add_argument("--compile-workers", type=int, default=os.cpu_count() or 1, help="parallel compiles")
    run.add_argument("--jobs", type=int, help="problems in flight (default: compile workers + GPUs)")
    run.add_argument("--trials", type=int, default=5)
    reference_mode_option(run)
    run.add_argument("--timeout", type=float, default=120.0, help="seconds before a kernel run counts as hung")
    run.add_argument("--no-report", action="store_true", help="do not write report.md / report.html at the end")
    run.add_argument("--no-progress", action="store_true", help="plain lines instead of the live display")
    run.add_argument("--handler", default=None, help=argparse.SUPPRESS)  # tests: serve GPU jobs on the CPU
    agent = run.add_argument_group("agent (--agent)")
    agent.add_argument("--llm-base-url", help=f"OpenAI-compatible endpoint (default: ${LLM_ENV['llm_base_url']})")
    agent.add_argument("--llm-model", help=f"model name (default: ${LLM_ENV['llm_model']})")
    agent.add_argument("--llm-api-key-env", default="OPENAI_API_KEY", help="the NAME of the variable holding the key")
    agent.add_argument("--llm-timeout", type=float, default=120.0)
    agent.add_argument("--llm-retries", type=retry_count, default=3)
    agent.add_argument("--llm-concurrency", type=int, default=4, help="LLM requests in flight, all problems together")
    agent.add_argument("--llm-price", help="USD per million prompt,completion tokens, e.g. 3,15 (records the cost)")
    agent.add_argument("--sandbox", choices=["required", "off"], default="required",
                       help="model-written kernels run jailed (bubblewrap); off: unjailed, and every row says so")
    agent.add_argument("--rounds", type=int, default=3, help="repair / optimize rounds per step")
    agent.add_argument("--llm-calls", type=int, default=20, help="LLM calls per problem")
    agent.add_argument("--wall-time", type=float, default=1800.0, help="seconds per problem")
    agent.add_argument("--optimize-steps", type=int, default=2, help="optimize steps after a correct kernel")
    agent.add_argument("--search", type=search_shape, default="greedy",
                       help="how each problem is optimized: greedy (one verified change a step) or beam:WxK (one "
                            "search of --optimize-steps steps; the report gives its best version and tree size)")
    tool = run.add_argument_group("toolchain")
    tool.add_argument("--nvcc")
    tool.add_argument("--arch", help="e.g. sm_90a (default: the local GPU, else sm_90a)")
    tool.add_argument("--cutlass-path")
    tool.add_argument("-I", dest="include_dirs", action="append", default=[])
    run.set_defaults(run=cmd_run)

    rep = command(sub, "report", "Markdown + HTML report of a results folder (two: side by side)")
    rep.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="one or two results folders")
    rep.add_argument("--out", type=Path, help="report path without suffix (default: DIR/report)")
    rep.set_defaults(run=cmd_report)
    return suite


def config_from_args(args):
    from cutegen.settings import Settings
    from cutegen.suite.gpus import DEFAULT_HANDLER
    from cutegen.suite.judge import Budget
    from cutegen.suite.runner import SuiteConfig

    settings = Settings(nvcc=args.nvcc, arch=args.arch, cutlass_path=args.cutlass_path, include_dirs=args.include_dirs,
                        test_timeout=args.timeout,
                        llm_base_url=args.llm_base_url or os.environ.get(LLM_ENV["llm_base_url"]),
                        llm_model=args.llm_model or os.environ.get(LLM_ENV["llm_model"]),
                        llm_api_key_env=args.llm_api_key_env, llm_timeout=args.llm_timeout,
                        llm_retries=args.llm_retries, max_rounds=args.rounds, sandbox=args.sandbox,
                        reference_mode=args.reference_mode)
    price = tuple(float(x) for x in args.llm_price.split(",")) if args.llm_price else None
    if price is not None and len(price) != 2:
        raise SystemExit("error: --llm-price takes two numbers: prompt,completion USD per million tokens")
    return SuiteConfig(out=args.out, kernels=args.kernels, agent=args.agent, profile=args.profile, settings=settings,
                       gpus=[g for g in args.gpus.split(",") if g] if args.gpus is not None else None, ray=args.ray,
                       handler=args.handler or DEFAULT_HANDLER, compile_workers=max(1, args.compile_workers),
                       jobs=args.jobs, state_dir=args.state_dir, llm_concurrency=args.llm_concurrency,
                       trials=args.trials, llm_price=price,
                       budget=Budget(rounds=args.rounds, llm_calls=args.llm_calls, wall_s=args.wall_time,
                                     optimize_steps=args.optimize_steps, search=args.search))


def cmd_run(args) -> int:
    from rich.console import Console

    from cutegen.suite import report
    from cutegen.suite.runner import run_suite
    from cutegen.toolchain import ToolchainError

    err = Console(stderr=True, soft_wrap=True)
    missing = [p for p in args.problems if not p.exists()] + ([args.kernels] if args.kernels and not
                                                              args.kernels.is_dir() else [])
    if missing:
        err.print(f"[red]error:[/] no such file or folder: {', '.join(map(str, missing))}")
        return 2
    from cutegen.suite.problems import discover

    if not discover(args.problems):
        err.print(f"[red]error:[/] no KernelBench problems (a .py with class Model, get_inputs and get_init_inputs) "
                  f"in {', '.join(map(str, args.problems))}")
        return 2
    config = config_from_args(args)
    # A run that will not stop can say where it is: `kill -USR1 PID` prints every thread's stack to stderr.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        if args.no_progress or not err.is_terminal:
            summary = run_suite(args.problems, config, on_event=_plain(err))
        else:
            from cutegen.cli.suite_progress import RichProgress

            with RichProgress(err) as progress:
                summary = run_suite(args.problems, config, on_event=progress)
    except (ToolchainError, RuntimeError) as e:
        err.print(f"[red]error:[/] {e}")
        return 2
    if summary.interrupted:
        err.print(f"[yellow]interrupted[/]: {summary.done} problem(s) written this run; rerun the same command to "
                  f"resume ({summary.out / 'results.jsonl'})")
        return 130
    if not args.no_report:
        md, page = report.write([args.out])
        err.print(f"report: {md} · {page}")
    s = report.summary(report.open_run(args.out))
    err.print(f"{s['correct']}/{s['problems']} correct · {s['compile_failures']} compile failure(s) · "
              f"{s['not_run']} not run or without a kernel · {summary.skipped} done before · {summary.seconds:.1f} s")
    return 0


def _plain(err):
    def on_event(e) -> None:
        if e.kind == "problem-done":
            row = e.row or {}
            speed = f" · {row['speedup_eager']:.2f}× eager" if row.get("speedup_eager") else ""
            err.print(f"[{e.done}/{e.total}] {e.name}: {row.get('verdict')}{speed}", highlight=False)
        elif e.kind == "started":
            gpus = ", ".join(e.gpus) or "none (kernels are built, not run)"
            err.print(f"suite: {e.total} problem(s), {e.skipped} done before · GPUs: {gpus}", highlight=False)
    return on_event


def cmd_report(args) -> int:
    from cutegen.suite import report

    if len(args.dirs) > 2:
        print("error: report takes one results folder, or two to compare", file=sys.stderr)
        return 2
    for d in args.dirs:
        if not (d / "results.jsonl").is_file():
            print(f"error: {d} holds no results.jsonl (run `cutegen suite run ... --out {d}` first)", file=sys.stderr)
            return 2
    md, page = report.write(args.dirs, args.out)
    print(md.read_text())
    print(f"HTML: {page}", file=sys.stderr)
    return 0

