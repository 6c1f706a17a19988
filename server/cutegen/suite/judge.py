"""One problem of a suite run, end to end: judge an existing kernel, or run the agent's pipeline and judge what
it kept. Runs in one of the runner's threads; the GPU parts go to the backend (one job per GPU at a time)."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from cutegen.compile import Builder, Tier
from cutegen.files import write_atomic
from cutegen.settings import Settings
from cutegen.suite import rows
from cutegen.suite.gpus import Backend, GpuWorker
from cutegen.suite.problems import Entry


@dataclass
class Budget:
    """Per problem, for --agent: rounds per step (generate's repairs, optimize's tries), LLM calls, wall time,
    how many optimize steps are attempted after a correct kernel, and how (`greedy`: one verified change a step;
    `beam:WxK`: one search of that many steps, agent/search.py)."""

    rounds: int = 3
    llm_calls: int = 20
    wall_s: float = 1800.0
    optimize_steps: int = 2
    search: str = "greedy"


@dataclass
class Context:
    backend: Backend
    builder: Builder
    settings: Settings
    out: Path
    state_dir: Path
    stop: threading.Event
    compile_slots: threading.Semaphore
    llm_slots: threading.Semaphore
    budget: Budget = field(default_factory=Budget)
    trials: int = 5
    profile: bool = False
    use_agent: bool = False
    kernels: Path | None = None
    llm_price: tuple[float, float] | None = None  # USD per million prompt / completion tokens
    on_stage: Callable[[str, str], None] = lambda name, stage: None
    cancellers: set = field(default_factory=set)


def judge(entry: Entry, ctx: Context, worker: GpuWorker | None = None, profile_ok: bool = True) -> dict:
    """Verdict, timing against eager and torch.compile, share of the ceilings and (with --profile) the
    bottleneck of `entry.kernel`. `worker`: where its GPU jobs run (default: any free GPU, unjailed: the
    person's own kernels); `profile_ok`: False for model-written kernels under a sandbox (ncu runs unjailed)."""
    if entry.kernel is None:
        where = f" under {ctx.kernels}" if ctx.kernels else ""
        return rows.placeholder(entry.name, str(entry.problem), "no-kernel",
                                f"no {entry.name}.cu or ModelNew {entry.name}.py{where}")
    build_s = wait_s = 0.0
    if entry.kernel.suffix == ".cu":  # compile here, on a CPU slot; the verify below finds it in the cache
        ctx.on_stage(entry.name, "build")
        asked = time.perf_counter()
        with ctx.compile_slots:
            started = time.perf_counter()
            wait_s = started - asked
            ctx.builder.run(Tier.BUILD, entry.kernel)
            build_s = time.perf_counter() - started
    from cutegen.harness.run import verify_kernel

    record = verify_kernel(entry.kernel, ctx.builder, worker or ctx.backend.worker(entry.name), problem=entry.problem,
                             trials=ctx.trials, timing=True, baselines=("eager", "compile"), state_dir=ctx.state_dir,
                             on_stage=lambda s: ctx.on_stage(entry.name, s), gpu=ctx.backend.has_gpu)
    profile = reply = None
    row = rows.from_record(entry.name, record)
    if ctx.profile and row["correct"] and not profile_ok:
        row["profile_note"] = "not profiled: a model-written kernel, and Nsight Compute does not run in the sandbox"
    elif ctx.profile and row["correct"]:
        ctx.on_stage(entry.name, "profile")
        reply = ctx.backend.call({"profile": {"kernel": str(entry.kernel), "problem": str(entry.problem),
                                              "state_dir": str(ctx.state_dir), "settings": asdict(ctx.settings)}},
                                 ctx.settings.profile_timeout + 60, entry.name)
        profile = rows.profile_record(reply)
        row = rows.from_record(entry.name, record, profile)
    row["build_seconds"] = round(build_s, 3)
    # the job's own time (compile + GPU worker) and the time it waited for a free CPU or GPU slot: the rest of
    # the problem's wall time is the suite's overhead (bench/suite_overhead.py)
    profiled = reply if profile else None
    row["own_seconds"] = round(build_s + rows.gpu_seconds(record) + rows.gpu_seconds(profiled), 3)
    row["queue_seconds"] = round(wait_s + rows.queue_seconds(record) + rows.queue_seconds(profiled), 3)
    return row


def agent(entry: Entry, ctx: Context) -> dict:
    """generate → compile/test → diagnose → localized patch (until correct, within the budget) → optimize one
    step at a time, or one search (`budget.search`) → the last verified version, judged like any kernel."""
    from cutegen.agent.agent import Agent
    from cutegen.agent.search import Shape

    budget = ctx.budget
    kernel = (ctx.out / "kernels" / f"{entry.name}.cu").resolve()  # "level2/1_x" → kernels/level2/1_x.cu
    kernel.parent.mkdir(parents=True, exist_ok=True)
    settings = replace(ctx.settings, max_rounds=budget.rounds)
    llm = _limited_llm(settings, ctx.llm_slots, budget.llm_calls)
    worker = ctx.backend.worker(entry.name)
    a = Agent(settings, ctx.builder, worker, state_dir=ctx.state_dir, problem=entry.problem, trials=ctx.trials,
              on_stage=lambda s: ctx.on_stage(entry.name, s), gpu=ctx.backend.has_gpu, llm=llm,
              candidate_runner=on_suite_gpus(worker))
    deadline = time.monotonic() + budget.wall_s
    timer = threading.Timer(budget.wall_s, a.cancel)  # the wall-time budget cuts a step short
    timer.daemon = True
    timer.start()
    ctx.cancellers.add(a.cancel)  # Ctrl-C cancels the step in flight
    outcomes: list = []
    text = None
    try:
        out = a.generate(entry.problem, kernel)
        outcomes.append(("generate", out))
        if out.ok and out.proposal:
            text = out.proposal.new_text
            write_atomic(kernel, text)
        shape = Shape.parse(budget.search)
        if text and not shape.greedy:
            text = _search(a, kernel, text, shape, settings, budget, deadline, outcomes)
        for _ in range(budget.optimize_steps if text and shape.greedy else 0):
            if time.monotonic() > deadline or ctx.stop.is_set() or (llm and llm.spent()):
                break
            step = a.optimize(kernel, text)
            outcomes.append(("optimize", step))
            if not (step.ok and step.proposal):
                break
            text = step.proposal.new_text
            write_atomic(kernel, text)  # only a verified, faster version replaces the kept one
    finally:
        timer.cancel()
        ctx.cancellers.discard(a.cancel)
    runner, note = a.verifier.candidate_worker(entry.problem)  # model-written: jailed unless the sandbox is off
    if text is not None and not ctx.stop.is_set() and runner is None:
        row = rows.placeholder(entry.name, str(entry.problem), "not-run", f"kept kernel not run: {note}",
                               kernel=str(kernel))
    elif text is not None and not ctx.stop.is_set():
        row = judge(Entry(entry.name, entry.problem, kernel), ctx, worker=runner,
                    profile_ok=getattr(runner, "jail", None) is None)
    else:
        verdict, message = rows.last_agent_verdict(outcomes)
        row = rows.placeholder(entry.name, str(entry.problem), verdict, message)
    row.update(rows.agent_fields(outcomes, text is not None))
    if any(step == "search" for step, _ in outcomes):
        from cutegen.agent.tree import VersionTree

        row.update(rows.search_fields(outcomes, VersionTree(ctx.state_dir, kernel)))
    row["sandbox"] = "jailed" if getattr(runner, "jail", None) is not None else (note or "unjailed")
    if row.get("correct") is not True:
        row["rounds_to_correct"] = None  # "compiled, not run" on a machine without a GPU is no proof
    row["llm_cost_usd"] = _cost(row, ctx.llm_price)
    row["budget"] = asdict(budget)
    row["stopped_by_wall_budget"] = time.monotonic() > deadline
    return row


def _search(a, kernel: Path, text: str, shape, settings: Settings, budget: Budget, deadline: float,
            outcomes: list) -> str:
    """The search applied to the generated kernel, within what is left of the problem's wall time: its best
    verified version replaces the kept one (its tree stays under the state folder: `cutegen versions`)."""
    from cutegen.agent.search import Limits

    minutes = max(0.0, deadline - time.monotonic()) / 60
    out = a.search(kernel, text, shape, limits=Limits(budget.optimize_steps, minutes, settings.optimize_tokens))
    outcomes.append(("search", out))
    if not (out.ok and out.proposal):
        return text
    write_atomic(kernel, out.proposal.new_text)
    return out.proposal.new_text


def on_suite_gpus(worker):
    """The candidates' runner of a suite: each jailed run on whichever of the suite's GPUs is free, one job per
    GPU, instead of the process-wide jailed worker; None (the Verifier's default) outside a GPU backend."""
    if not isinstance(worker, GpuWorker):
        return None
    return lambda jail: GpuWorker(worker.backend, worker.label, jail=jail)


def _cost(row: dict, price: tuple[float, float] | None) -> float | None:
    """What the endpoint reported, else tokens × --llm-price, else unknown."""
    if row.get("reported_cost_usd"):
        return row["reported_cost_usd"]
    if not price:
        return None
    return round((row["prompt_tokens"] * price[0] + row["completion_tokens"] * price[1]) / 1e6, 6)


class LimitedLLM:
    """The agent's LLM client under the suite's limits: a concurrency limit shared by all problems, and this
    problem's LLM-call budget (a call past it fails as an LLM error, which ends the step cleanly)."""

    def __init__(self, client, slots: threading.Semaphore, calls: int):
        self.client, self.slots, self.budget, self.calls = client, slots, calls, 0

    def spent(self) -> bool:
        return self.calls >= self.budget

    def chat(self, messages, **kw):
        from cutegen.agent.llm import LLMError

        if self.spent():
            raise LLMError("budget", f"the problem's budget of {self.budget} LLM calls is spent")
        self.calls += 1
        with self.slots:
            return self.client.chat(messages, **kw)

    def secrets(self) -> list[str]:
        return self.client.secrets()


def _limited_llm(settings: Settings, slots: threading.Semaphore, calls: int) -> LimitedLLM | None:
    from cutegen.agent.llm import LLMClient, LLMError, configured

    if configured(settings) is not None:
        return None  # the Agent then says plainly that no endpoint is configured
    try:
        return LimitedLLM(LLMClient(settings), slots, calls)
    except LLMError:
        return None
