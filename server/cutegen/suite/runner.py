"""Scheduling of a suite run: problems in threads (compiles bounded by the CPU cores, LLM requests by their own
limit), GPU jobs on the backend (one per GPU), results appended per problem, events for whoever shows progress.

Ctrl-C: the GPU workers are stopped, steps in flight cancelled, and a problem not finished is never written, so
the results file holds only whole problems and a rerun picks up the rest."""

from __future__ import annotations

import json
import os
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cutegen.files import write_atomic
from cutegen.settings import Settings
from cutegen.state import under
from cutegen.suite import rows
from cutegen.suite.gpus import DEFAULT_HANDLER, Backend, LocalBackend, local_gpus
from cutegen.suite.judge import Budget, Context, agent, judge
from cutegen.suite.problems import Entry, discover, match_kernels
from cutegen.suite.store import ResultStore


@dataclass
class Event:
    """What the progress display and the language server's work-done progress are told.

    kind: "started" (total, skipped), "problem-started", "stage" (name, stage), "gpu-busy" / "gpu-idle" (gpu,
    name), "problem-done" (name, row), "finished" / "interrupted". Counts are always current."""

    kind: str
    name: str | None = None
    stage: str | None = None
    gpu: str | None = None
    row: dict | None = None
    total: int = 0
    done: int = 0
    running: int = 0
    failed: int = 0
    skipped: int = 0
    gpus: tuple[str, ...] = ()


@dataclass
class SuiteConfig:
    out: Path
    kernels: Path | None = None  # judge the kernels found here
    agent: bool = False  # else: generate and optimize with the agent
    profile: bool = False
    settings: Settings = field(default_factory=Settings)
    gpus: list[str] | None = None  # None: this machine's GPUs
    ray: str | None = None  # a Ray address, or "auto"
    handler: str = DEFAULT_HANDLER  # serves GPU jobs inside a worker ("module:function")
    compile_workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    jobs: int | None = None  # problems in flight; default: compile workers + GPUs
    llm_concurrency: int = 4
    budget: Budget = field(default_factory=Budget)
    trials: int = 5
    llm_price: tuple[float, float] | None = None
    state_dir: Path | None = None  # build cache and run records; default OUT/.cutegen


@dataclass
class Summary:
    total: int
    done: int
    skipped: int
    failed: int
    interrupted: bool
    rows: list[dict]
    out: Path
    seconds: float


def run_suite(problems: list[Path], config: SuiteConfig, on_event: Callable[[Event], None] | None = None,
              stop: threading.Event | None = None, backend: Backend | None = None) -> Summary:
    """Run every problem of `problems` (files or folders) not yet in `config.out`; returns the summary.
    `stop` ends the run like Ctrl-C; `backend` replaces the one the config names (it is closed at the end)."""
    started = time.perf_counter()
    emit_to = on_event or (lambda e: None)
    entries = discover(problems)
    if config.kernels is not None:
        entries = match_kernels(entries, config.kernels)
    store = ResultStore(config.out)
    finished = store.done()
    todo = [e for e in entries if e.name not in finished]
    _write_manifest(config, problems, len(entries))
    state = _State(total=len(entries), skipped=len(entries) - len(todo), emit_to=emit_to)
    backend = backend or make_backend(config, None)
    backend.on_event = lambda kind, gpu, name: state.emit(kind, gpu=gpu, name=name)
    state.gpus = tuple(backend.gpus)
    ctx = _context(config, backend, stop or threading.Event(), state)
    state.emit("started")
    interrupted = False
    pool = ThreadPoolExecutor(config.jobs or max(1, config.compile_workers + len(backend.gpus)),
                              thread_name_prefix="cutegen-suite")
    try:
        pending = {pool.submit(_one, e, ctx, store, state) for e in todo}
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            if ctx.stop.is_set():
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        interrupted = True
        _stop_everything(ctx, backend)
        state.emit("interrupted")
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        backend.close()
    if not interrupted:
        state.emit("finished")
    return Summary(len(entries), state.done, state.skipped, state.failed, interrupted, store.rows(), config.out,
                   time.perf_counter() - started)


def make_backend(config: SuiteConfig, on_event) -> Backend:
    if config.ray:
        from cutegen.suite.ray_backend import RayBackend

        return RayBackend(config.ray, config.handler, on_event)
    return LocalBackend(local_gpus() if config.gpus is None else config.gpus, config.handler, on_event)


def _context(config: SuiteConfig, backend: Backend, stop: threading.Event, state: "_State") -> Context:
    from cutegen.compile import Builder
    from cutegen.toolchain import discover as toolchain

    state_dir = Path(config.state_dir or under(config.out)).resolve()
    try:
        import torch  # noqa: F401  (each run record names the torch version: import it once, up front)
    except ImportError:
        pass
    builder = Builder(toolchain(config.settings), config.settings, state_dir)
    return Context(backend=backend, builder=builder, settings=config.settings, out=Path(config.out).resolve(),
                   state_dir=state_dir, stop=stop, compile_slots=threading.Semaphore(max(1, config.compile_workers)),
                   llm_slots=threading.Semaphore(max(1, config.llm_concurrency)), budget=config.budget,
                   trials=config.trials, profile=config.profile, use_agent=config.agent, kernels=config.kernels,
                   llm_price=config.llm_price,
                   on_stage=lambda name, stage: state.emit("stage", name=name, stage=stage))


def _one(entry: Entry, ctx: Context, store: ResultStore, state: "_State") -> None:
    if ctx.stop.is_set():
        return
    state.change(running=+1)
    state.emit("problem-started", name=entry.name)
    started = time.perf_counter()
    try:
        row = (agent if ctx.use_agent else judge)(entry, ctx)
    except Exception as e:  # a bug or an unreadable file: that problem's verdict, the run goes on
        row = rows.placeholder(entry.name, str(entry.problem), "suite-error", f"{type(e).__name__}: {e}",
                               traceback=traceback.format_exc(limit=8))
    finally:
        state.change(running=-1)
    if ctx.stop.is_set():
        return  # cut short: not written, so the rerun does it again
    row["wall_seconds"] = round(time.perf_counter() - started, 3)
    row["finished"] = time.time()
    store.append(row)
    state.change(done=+1, failed=0 if row.get("correct") is not False else +1)
    state.emit("problem-done", name=entry.name, row=row)


def _stop_everything(ctx: Context, backend: Backend) -> None:
    ctx.stop.set()
    for cancel in list(ctx.cancellers):
        try:
            cancel()
        except Exception:
            pass
    backend.close()


def _write_manifest(config: SuiteConfig, problems: list[Path], total: int) -> None:
    """suite.json: what this run is (for the report's header); rewritten by each (re)run."""
    manifest = {"problems": [str(Path(p).resolve()) for p in problems], "total": total,
                "mode": "agent" if config.agent else "kernels",
                "kernels": str(Path(config.kernels).resolve()) if config.kernels else None,
                "profile": config.profile, "backend": "ray" if config.ray else "local", "trials": config.trials,
                "model": config.settings.llm_model if config.agent else None,
                "budget": config.budget.__dict__ if config.agent else None, "updated": time.time()}
    Path(config.out).mkdir(parents=True, exist_ok=True)
    write_atomic(Path(config.out) / "suite.json", json.dumps(manifest, indent=1))


class _State:
    def __init__(self, total: int, skipped: int, emit_to):
        self.total, self.skipped, self.done, self.running, self.failed = total, skipped, 0, 0, 0
        self.gpus: tuple[str, ...] = ()
        self._emit_to = emit_to
        self._lock = threading.Lock()

    def change(self, **delta) -> None:
        with self._lock:
            for k, v in delta.items():
                setattr(self, k, getattr(self, k) + v)

    def emit(self, kind: str, **kw) -> None:
        with self._lock:
            event = Event(kind, total=self.total, done=self.done + self.skipped, running=self.running,
                          failed=self.failed, skipped=self.skipped, gpus=self.gpus, **kw)
        try:
            self._emit_to(event)
        except Exception:
            pass  # a display must never stop the run
