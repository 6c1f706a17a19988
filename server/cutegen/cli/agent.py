"""The agent's command-line subcommands: diagnose, fix, optimize, tune, restore-best, generate. They print the verified diff and what was verified; `--apply` writes
it (only when the file still holds the text the patch was verified against)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from cutegen.cli.options import command, console, retry_count, session, settings, toolchain_options
from cutegen.files import write_atomic
from cutegen.settings import CHOICES, Settings

DEFAULTS = Settings()
LLM_ENV = {"llm_base_url": "CUTEGEN_LLM_BASE_URL", "llm_model": "CUTEGEN_LLM_MODEL"}


NEEDS_LLM = ("fix", "optimize", "generate")  # diagnose falls back to the knowledge base; tune and restore need none
# How requests are shaped for an endpoint (agent/endpoint.py): "auto" learns it from the endpoint's refusals.
REQUEST_SETTINGS = ("llm_token_parameter", "llm_send_temperature", "llm_reasoning_effort", "llm_stream")


def add_parsers(sub) -> None:
    specs = [
        ("diagnose", "explain the file's first error (LLM, else the knowledge base)", _diagnose),
        ("fix", "propose a verified patch for the first error (or the failing test)", _fix),
        ("optimize", "one verified optimization step, timed against the current version (GPU)", _optimize),
        ("tune", "sweep `// cutegen: tunable` constants; propose the fastest correct values (GPU, no LLM)", _tune),
        ("restore-best", "propose going back to the best version (by the objective it was optimized for)", _restore),
    ]
    for name, help_text, run in specs:
        p = command(sub, name, help_text)
        p.add_argument("file", type=Path, help="the kernel")
        p.add_argument("--problem", help="the reference problem (default: the `// cutegen: problem=` comment, then "
                                         "a sibling .py)")
        _common(p, llm=name not in ("tune", "restore-best"))
        if name != "diagnose":
            p.add_argument("--apply", action="store_true", help="write the verified patch into the file")
        if name == "optimize":
            search_options(p)
            p.add_argument("--objective", dest="optimize_objective", choices=CHOICES["optimize_objective"],
                           default=DEFAULTS.optimize_objective,
                           help="what a better candidate is: less time, less energy per call (NVML), or energy × delay")
        p.set_defaults(run=lambda args, run=run, name=name: _main(args, run, name))
    g = command(sub, "generate", "write a first kernel for a KernelBench problem, then fix it until it verifies")
    g.add_argument("problem", type=Path, help="the KernelBench problem (.py with Model, get_inputs)")
    g.add_argument("-o", "--output", type=Path, required=True, help="the .cu file to write (must not exist)")
    _common(g, llm=True)
    g.set_defaults(run=lambda args: _main(args, _generate, "generate"))


def _common(p: argparse.ArgumentParser, *, llm: bool) -> None:
    toolchain_options(p)
    p.add_argument("--trials", type=int, default=5, help="correctness trials per verification")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    if not llm:
        return
    p.add_argument("--llm-base-url", help=f"OpenAI-compatible endpoint (default: ${LLM_ENV['llm_base_url']})")
    p.add_argument("--llm-model", help=f"model name (default: ${LLM_ENV['llm_model']})")
    p.add_argument("--llm-api-key-env", default=DEFAULTS.llm_api_key_env,
                   help="the NAME of the environment variable holding the key (never the key)")
    p.add_argument("--temperature", type=float, default=DEFAULTS.temperature, help="sampling temperature (0: greedy)")
    p.add_argument("--max-tokens", type=token_count, default=DEFAULTS.max_tokens,
                   help="tokens per reply (the limit; --llm-token-parameter none sends none)")
    p.add_argument("--llm-token-parameter", choices=CHOICES["llm_token_parameter"], default=DEFAULTS.llm_token_parameter,
                   help="the request parameter carrying --max-tokens; auto: max_tokens, or max_completion_tokens once "
                        "the endpoint asks for it (reasoning models), remembered under .cutegen/")
    p.add_argument("--llm-send-temperature", choices=CHOICES["llm_send_temperature"],
                   default=DEFAULTS.llm_send_temperature,
                   help="send --temperature; auto: until the endpoint refuses it (reasoning models), remembered")
    p.add_argument("--llm-reasoning-effort", choices=CHOICES["llm_reasoning_effort"],
                   default=DEFAULTS.llm_reasoning_effort, help="reasoning_effort for reasoning models that take it")
    p.add_argument("--llm-stream", choices=CHOICES["llm_stream"], default=DEFAULTS.llm_stream,
                   help="stream replies; auto: once the endpoint answers with an event stream anyway, remembered")
    p.add_argument("--llm-timeout", type=float, default=DEFAULTS.llm_timeout, help="seconds for one request")
    p.add_argument("--llm-retries", type=retry_count, default=DEFAULTS.llm_retries,
                   help="retries after a timeout, 429, 5xx or a malformed reply")
    p.add_argument("--max-rounds", type=int, default=DEFAULTS.max_rounds,
                   help="agent rounds (diagnose → patch → verify) before giving up")


def search_options(p: argparse.ArgumentParser) -> None:
    """How Optimize searches (agent/search.py); the suite's --agent takes the same."""
    p.add_argument("--search", type=search_shape, default=DEFAULTS.optimize_search,
                   help="greedy (one verified change) or beam:WxK (each step expands the W most promising versions "
                        "with K candidates each); every version is kept: `cutegen versions FILE`")
    p.add_argument("--steps", dest="optimize_steps", type=token_count, default=DEFAULTS.optimize_steps,
                   help="steps of a search")
    p.add_argument("--minutes", dest="optimize_minutes", type=float, default=DEFAULTS.optimize_minutes,
                   help="wall minutes a search may take")
    p.add_argument("--tokens", dest="optimize_tokens", type=token_count, default=DEFAULTS.optimize_tokens,
                   help="LLM tokens a search may spend")


def search_shape(value: str) -> str:
    from cutegen.agent.search import Shape

    try:
        return str(Shape.parse(value))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _settings(args):
    problem = None if isinstance(getattr(args, "problem", None), Path) else getattr(args, "problem", None)
    s = settings(args, problem=problem)
    for name in ("llm_api_key_env", "temperature", "max_tokens", "llm_timeout", "llm_retries", "max_rounds",
                 "optimize_steps", "optimize_minutes", "optimize_tokens", "optimize_objective", *REQUEST_SETTINGS):
        if hasattr(args, name):
            setattr(s, name, getattr(args, name))
    if getattr(args, "search", None):
        s.optimize_search = args.search
    for name, env in LLM_ENV.items():
        setattr(s, name, getattr(args, name, None) or os.environ.get(env) or None)
    return s


def _main(args, run, name: str) -> int:
    err = console()
    source = Path(getattr(args, "file", None) or args.problem)
    s = _settings(args)
    if name in NEEDS_LLM or (name == "diagnose" and (s.llm_base_url or s.llm_model)):  # asked for an LLM: say it
        why = _unreachable(s)  # before any build or measurement: say it in a second, not after 21 s
        if why:
            err.print(f"[red]error:[/] {why}")
            return 2
    engine = session(args, err, s, source)
    if engine is None:
        return 2
    path = source.resolve()
    try:
        with err.status("starting") as status:
            agent = engine.agent(path, problem=getattr(args, "problem", None), trials=args.trials,
                                 on_stage=lambda st: status.update(st))
            outcome = run(args, agent)
    finally:
        engine.close()
    return _report(args, outcome, err)


def token_count(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n} (to send no token limit at all: "
                                         "--llm-token-parameter none)")
    return n


def _unreachable(s) -> str | None:
    """Why the LLM endpoint cannot be used (not configured, unreachable, key refused), or None."""
    from cutegen.agent.llm import LLMClient, LLMError

    try:
        LLMClient(s).reach()
    except LLMError as e:
        return e.message
    return None


def _report(args, outcome, err) -> int:
    proposal = getattr(outcome, "proposal", None)
    if args.json:
        data = outcome.to_json() if hasattr(outcome, "to_json") else {"ok": outcome.ok, "message": outcome.message}
        print(json.dumps(data, indent=1, default=str))
    else:
        message = outcome.message
        if proposal is not None:
            print(proposal.diff, end="")
        elif getattr(outcome, "diagnosis", None):
            print(outcome.diagnosis)  # the answer, once, on stdout; stderr says only where it came from
            source = {"llm": "the LLM", "knowledge": "the knowledge base"}.get(outcome.diagnosis_source, "")
            message = message.replace(outcome.diagnosis, "").strip() or f"diagnosis from {source}"
        err.print(("[green]" if outcome.ok else "[yellow]") + message.replace("[", r"\[") + "[/]")
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
        try:
            write_atomic(target, proposal.new_text)
        except OSError as e:  # a full disk: the file is as it was (files.py)
            err.print("[red]not applied:[/] " + str(e).replace("[", r"\["))
            return 1
        err.print(f"applied to {target}")
    return 0 if outcome.ok else 1


def _read(args) -> tuple[Path, str]:
    return args.file.resolve(), args.file.read_text()


def _diagnose(args, agent):
    path, text = _read(args)
    diagnostic = agent.first_error(path, text)
    if diagnostic is None:
        from cutegen.agent.agent import AgentResult

        return AgentResult(False, f"{path.name} compiles: nothing to diagnose (run `cutegen test` for a wrong result)")
    return agent.diagnose(path, text, diagnostic=diagnostic)


def _fix(args, agent):
    return agent.fix_first_problem(*_read(args))


def _optimize(args, agent):
    return agent.optimize(*_read(args))


def _restore(args, agent):
    return agent.restore_best(*_read(args))


def _tune(args, agent):
    return agent.tune(*_read(args))


def _generate(args, agent):
    from cutegen.agent.agent import AgentResult

    if args.output.exists():
        return AgentResult(False, f"{args.output} exists: generate writes new files only")
    outcome = agent.generate(args.problem, args.output)
    if outcome.proposal is not None:
        write_atomic(args.output, outcome.proposal.new_text, new=True)  # a new file: nothing of the user's is overwritten
        outcome.message += f" · written to {args.output}"
    return outcome

