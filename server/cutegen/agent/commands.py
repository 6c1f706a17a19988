"""The agent's command-line subcommands (wired into `cutegen` by cli.py): diagnose, fix, optimize,
tune, restore-best, generate. They print the verified diff and what was verified; `--apply` writes
it (only when the file still holds the text the patch was verified against)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

LLM_ENV = {"llm_base_url": "CUTEGEN_LLM_BASE_URL", "llm_model": "CUTEGEN_LLM_MODEL"}


def add_parsers(sub, toolchain_options) -> None:
    specs = [
        ("diagnose", "explain the file's first error (LLM, else the knowledge base)", _diagnose),
        ("fix", "propose a verified patch for the first error (or the failing test)", _fix),
        ("optimize", "one verified optimization step, timed against the current version (GPU)", _optimize),
        ("tune", "sweep `// cutegen: tunable` constants; propose the fastest correct values (GPU, no LLM)", _tune),
        ("restore-best", "propose going back to the fastest measured version", _restore),
    ]
    for name, help_text, run in specs:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("file", type=Path)
        _common(p, toolchain_options)
        if name != "diagnose":
            p.add_argument("--apply", action="store_true", help="write the verified patch into the file")
        p.set_defaults(run=lambda args, run=run: _main(args, run))
    g = sub.add_parser("generate", help="write a first kernel for a KernelBench problem, then fix it until it verifies")
    g.add_argument("problem", type=Path)
    g.add_argument("-o", "--output", type=Path, required=True, help="the .cu file to write (must not exist)")
    _common(g, toolchain_options)
    g.set_defaults(run=lambda args: _main(args, _generate))


def _common(p: argparse.ArgumentParser, toolchain_options) -> None:
    toolchain_options(p)
    p.add_argument("--problem", help="the reference problem (default: directive comment, then sibling .py)")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("--llm-base-url", help=f"OpenAI-compatible endpoint (default: ${LLM_ENV['llm_base_url']})")
    p.add_argument("--llm-model", help=f"model name (default: ${LLM_ENV['llm_model']})")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY", help="the NAME of the variable holding the key")
    p.add_argument("--temperature", type=float, default=0.2)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--llm-timeout", type=float, default=120.0)
    p.add_argument("--llm-retries", type=int, default=3)
    p.add_argument("--max-rounds", type=int, default=3)


def _settings(args):
    from cutegen.settings import Settings

    s = Settings(nvcc=args.nvcc, arch=args.arch, cutlass_path=args.cutlass_path, include_dirs=args.include_dirs,
                 problem=args.problem, llm_api_key_env=args.llm_api_key_env, temperature=args.temperature,
                 max_tokens=args.max_tokens, llm_timeout=args.llm_timeout, llm_retries=args.llm_retries,
                 max_rounds=args.max_rounds)
    for field, env in LLM_ENV.items():
        setattr(s, field, getattr(args, field) or os.environ.get(env) or None)
    return s


def _main(args, run) -> int:
    from rich.console import Console

    from cutegen.agent.loop import Agent
    from cutegen.build import Builder
    from cutegen.harness.worker import Worker
    from cutegen.toolchain import ToolchainError, discover

    err = Console(stderr=True, soft_wrap=True)
    source = getattr(args, "file", None) or args.problem
    if not Path(source).is_file():
        err.print(f"[red]error:[/] {source}: no such file")
        return 2
    settings = _settings(args)
    try:
        builder = Builder(discover(settings), settings, args.state_dir)
    except ToolchainError as e:
        err.print(f"[red]error:[/] {e}")
        return 2
    worker = Worker()
    try:
        with err.status("starting") as status:
            agent = Agent(settings, builder, worker, state_dir=args.state_dir, problem=args.problem, trials=args.trials,
                          on_stage=lambda s: status.update(s))
            outcome = run(args, agent)
    finally:
        worker.stop()
    return _report(args, outcome, err)


def _report(args, outcome, err) -> int:
    proposal = getattr(outcome, "proposal", None)
    if args.json:
        data = outcome.to_json() if hasattr(outcome, "to_json") else {"ok": outcome.ok, "message": outcome.message}
        print(json.dumps(data, indent=1, default=str))
    else:
        if proposal is not None:
            print(proposal.diff, end="")
        elif getattr(outcome, "diagnosis", None):
            print(outcome.diagnosis)
        err.print(("[green]" if outcome.ok else "[yellow]") + outcome.message.replace("[", r"\[") + "[/]")
        if getattr(outcome, "usage", None) and outcome.usage.calls:
            u = outcome.usage
            err.print(f"[dim]LLM: {u.calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
                      f"{u.wait_s:.1f} s waiting[/]")
        if getattr(outcome, "transcript", None):
            err.print(f"[dim]transcript: {Path(outcome.transcript).parent}[/]")
    if proposal is not None and getattr(args, "apply", False):
        target = Path(proposal.kernel)
        current = target.read_text() if target.exists() else ""
        if current != proposal.base_text:
            err.print(f"[red]not applied:[/] {target} changed since the patch was verified")
            return 1
        target.write_text(proposal.new_text)
        err.print(f"applied to {target}")
    return 0 if outcome.ok else 1


def _read(args) -> tuple[Path, str]:
    return args.file.resolve(), args.file.read_text()


def _first_error(agent, path: Path, text: str):
    from cutegen.build import Tier

    result = agent.verifier.builder.run(Tier.CHECK, path, text)
    return next((d for d in result.errors if d.file == str(path)), result.errors[0] if result.errors else None)


def _diagnose(args, agent):
    path, text = _read(args)
    diagnostic = _first_error(agent, path, text)
    if diagnostic is None:
        from cutegen.agent.loop import Outcome

        return Outcome(False, f"{path.name} compiles: nothing to diagnose (run `cutegen test` for a wrong result)")
    return agent.diagnose(path, text, diagnostic=diagnostic)


def _fix(args, agent):
    from cutegen.agent.loop import Outcome
    from cutegen.harness.verify import verify_kernel

    path, text = _read(args)
    diagnostic = _first_error(agent, path, text)
    if diagnostic is not None:
        return agent.fix(path, text, diagnostic=diagnostic)
    v = agent.verifier
    if v.problem_for(path) is None or not v.gpu:
        return Outcome(False, f"{path.name} compiles; without a paired problem and a GPU there is no failing test to fix")
    record = verify_kernel(path, v.builder, v.worker, problem=args.problem, trials=args.trials, state_dir=args.state_dir)
    if record["verdict"] == "pass":
        return Outcome(True, f"{path.name} passes its test: nothing to fix")
    return agent.fix(path, text, record=record)


def _optimize(args, agent):
    return agent.optimize(*_read(args))


def _restore(args, agent):
    return agent.restore_best(*_read(args))


def _tune(args, agent):
    from cutegen.agent.tune import tune

    return tune(*_read(args), agent.verifier, on_stage=agent.on_stage)


def _generate(args, agent):
    from cutegen.agent.loop import Outcome

    if args.output.exists():
        return Outcome(False, f"{args.output} exists: generate writes new files only")
    outcome = agent.generate(args.problem, args.output)
    if outcome.proposal is not None:
        args.output.write_text(outcome.proposal.new_text)  # a new file: nothing of the user's is overwritten
        outcome.message += f" · written to {args.output}"
    return outcome


if __name__ == "__main__":
    sys.exit("use `cutegen <command>`")
