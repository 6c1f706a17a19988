"""The engine session both adapters build (the CLI for one command, the language server for an editor session):
settings, toolchain, one Builder per state dir, the warm GPU worker, latest check results, and the actions
(test, bench, profile with its per-line profile, sanitize) as calls that return a finished run record.

Nothing here speaks LSP or prints. Methods that may run processes (toolchain discovery, the harness) are called
from worker threads by the server, hence the lock.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cutegen import records
from cutegen.compile import Builder, Tier
from cutegen.cancel import Cancel
from cutegen.model import CheckResult
from cutegen.settings import Settings
from cutegen.state import StateDir
from cutegen.toolchain import Toolchain, discover

if TYPE_CHECKING:  # for the annotation only: type_checker() imports the type tier when first used
    from cutegen.typecheck import TypeChecker

# The adapters import no compile/ or harness/ module (tests/test_import_rules.py): what they need of them
# comes through here (these names, and `Tier` above).
from cutegen.compile.fitness import unfit as unfit
from cutegen.compile.inline_sources import is_modelnew as is_modelnew
from cutegen.layouts.probe import LayoutFact as LayoutFact, LayoutProbe, ProbeResult as ProbeResult
from cutegen.layouts.probe import nothing_at as nothing_at  # why a line has no layout (cli/layout.py, lsp/layouts.py)

Stage = Callable[[str], None]


@dataclass
class Checked:
    """A compile and its record: the result is right even when the record could not be written (a full disk)."""

    result: CheckResult
    record: Path | None = None
    unsaved: OSError | None = None  # why the record was not written


class Session:
    def __init__(self, settings: Settings | None = None, *, state_dir: Path | None = None) -> None:
        self.settings = settings or Settings()
        self.roots: list[Path] = []  # workspace folders, first one first
        self.results: dict[str, CheckResult] = {}  # latest finished check, by resolved path
        self.fixed_state = StateDir(state_dir) if state_dir else None  # the CLI's --state-dir
        self._generation = 0  # bumped by every settings change
        self._shown_error: tuple[int, str] | None = None
        self._toolchain: Toolchain | None = None
        self._builders: dict[StateDir, Builder] = {}
        self._type_checkers: dict[StateDir, TypeChecker] = {}  # the type tier's, per state dir (typecheck/checker.py)
        self._probes: dict[StateDir, LayoutProbe] = {}  # the layout probes, per state dir, on that dir's Builder
        self._worker = None  # the harness's GPU worker process, kept warm between tests
        self._jailed = None  # agent/candidates.JailedWorkers: the judges of model-written candidates, one per jail
        self._lock = threading.Lock()
        # One GPU action at a time (test, bench, profile), whoever asks: a kernel timed or profiled while another
        # runs would be measured on a shared card, and the worker speaks one request at a time.
        self._gpu = threading.Lock()

    def apply(self, settings: Settings) -> bool:
        """Use new settings; returns whether anything changed (then the toolchain is found again)."""
        with self._lock:
            if settings == self.settings:
                return False
            self.settings = settings
            self._toolchain = None
            self._builders.clear()
            self._type_checkers.clear()
            self._probes.clear()
            self._generation += 1
            return True

    def state_dir(self, path: Path) -> StateDir:
        """The `.cutegen/` of the workspace holding `path` (an editor folder, else the nearest root: state.py)."""
        return self.fixed_state or StateDir.for_file(path, self.roots)

    def builder(self, path: Path) -> Builder:
        """The builder for `path`'s state dir. Blocking (discovery runs nvcc); raises ToolchainError."""
        with self._lock:
            if self._toolchain is None:
                self._toolchain = discover(self.settings)
            state = self.state_dir(path)
            if state not in self._builders:
                self._builders[state] = Builder(self._toolchain, self.settings, state, roots=self.roots or None)
            return self._builders[state]

    def file_flags(self, path: Path):
        """`path`'s compile flags and where they came from (compile/configuration.py's FileFlags): the type tier
        compiles with `.common()` (standard, include folders in order, macros) and CUTLASS `.cutlass_include`."""
        return self.builder(path).file_flags(path)

    def type_checker(self, path: Path):
        """The type tier (clang on unsaved text) for `path`'s state dir; same toolchain as the builder."""
        from cutegen.typecheck import TypeChecker

        builder = self.builder(path)
        with self._lock:
            state = self.state_dir(path)
            if state not in self._type_checkers:  # its warm builds wait for the save tier's compiles
                self._type_checkers[state] = TypeChecker(builder.toolchain, self.settings, state,
                                                         others_busy=builder.busy, file_flags=builder.file_flags)
            return self._type_checkers[state]

    def layout_probe(self, path: Path) -> LayoutProbe:
        """The layout probe for `path`'s state dir (layouts/probe.py), compiling with that dir's Builder: the
        check's flags, and one probe per file at a time (a newer version kills the older probe). Made again when
        the settings change: it holds the Builder it was made on, so a probe never outlives its flags.
        Blocking (toolchain discovery)."""
        builder = self.builder(path)
        with self._lock:
            state = self.state_dir(path)
            probe = self._probes.get(state)
            if probe is None or probe.builder is not builder:
                probe = self._probes[state] = LayoutProbe(builder.toolchain, builder.settings, state.path,
                                                          builder=builder)
            return probe

    def check(self, path: Path, text: str | None = None, *, tier: str = Tier.CHECK.value, job: str | None = None,
              version: int | None = None, on_stage: Stage | None = None, record: bool = True) -> Checked:
        """Compile `path` (or its unsaved `text`) in a tier ("type", "check" or "build") and write the run record
        both adapters show (`version`: the editor's document version it was made from). A cancelled compile
        writes nothing."""
        if tier == "type":
            result = self.type_checker(path).run(path, text, job=job)
        else:
            result = self.builder(path).run(Tier(tier), path, text, job=job, on_stage=on_stage)
        if not record or result.cancelled:
            return Checked(result)
        payload = {"result": result.to_json()} | ({"version": version} if version is not None else {})
        try:
            return Checked(result, records.write(self.state_dir(path), tier, result.file, payload))
        except OSError as e:  # the diagnostics are still right: the caller says, once, that it was not saved
            return Checked(result, unsaved=e)

    def agent(self, path: Path, *, problem: str | Path | None = None, trials: int = 5,
              on_stage: Stage | None = None, gpu: bool | None = None):
        """The agent (fix, diagnose, optimize, generate, tune) for one file, on this session's Builder and warm
        worker. Blocking (toolchain discovery): the editor calls it from a thread. `gpu`: whether candidates are
        tested and timed (None: when this machine has a GPU; False: checked and built only)."""
        from cutegen.agent.agent import Agent

        return Agent(self.settings, self.builder(path), self.worker(), state_dir=self.state_dir(path),
                     problem=problem, trials=trials, on_stage=on_stage, gpu=gpu,
                     candidate_runner=self.jailed_workers())

    def jailed_workers(self):
        """The jailed judges of model-written candidates, one per jail, warm across agent requests (closed with
        the session)."""
        with self._lock:
            if self._jailed is None:
                from cutegen.agent.candidates import JailedWorkers

                self._jailed = JailedWorkers()
            return self._jailed

    def worker(self, factory=None):
        """The GPU worker process (started on first use)."""
        with self._lock:
            if self._worker is None:
                if factory is None:
                    from cutegen.harness.worker import Worker as factory
                self._worker = factory()
            return self._worker

    def stop_worker(self) -> None:
        """Kill the worker (a cancelled or hung run); the next run starts a fresh one."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def close(self) -> None:
        self.stop_worker()
        with self._lock:
            jailed, self._jailed = self._jailed, None
            checkers, self._type_checkers = list(self._type_checkers.values()), {}
        if jailed is not None:
            jailed.stop()
        for checker in checkers:  # their parser processes: a header set's build would hold up the exit
            checker.close()

    def first_report(self, error: str) -> bool:
        """True the first time an error text is seen under the current settings: errors that every
        keystroke would repeat are shown once."""
        key = (self._generation, error)
        if self._shown_error == key:
            return False
        self._shown_error = key
        return True

    @staticmethod
    def place_reply(reply: str, text: str, name: str, *, finish_reason: str = "", fmt: str = "auto",
                    shown: str | None = None):
        """The patch an LLM reply proposes for the file `name` holding `text`, placed as the agent places it
        (agent/patch.py's Patch: the diff, or why it is refused); nothing is built or changed. `shown`: the text the
        model saw, when it differs from `text`."""
        from cutegen.agent.patch import apply_reply

        return apply_reply(reply, text, name, finish_reason=finish_reason, fmt=fmt, shown=shown)

    # -- actions: each returns the finished run record, typed ---------------------------------------------

    def missing_part(self, action: str) -> str | None:
        """The module this build lacks for `action` ("test", "profile" or "sanitize"), or None: the harness, the
        profiler and what they import are optional parts of a build. The adapters ask here before they offer an
        action, rather than importing engine modules by name."""
        try:
            if action == "test":
                import cutegen.harness.run  # noqa: F401
            elif action == "profile":
                import cutegen.profiler.profile  # noqa: F401
            elif action == "sanitize":
                import cutegen.profiler.sanitizer  # noqa: F401
            else:
                raise ValueError(f"no such action: {action!r}")
        except ImportError as e:
            return e.name or action
        return None

    def test(self, path: Path, *, timing: bool = False, trials: int = 5, seed: int | None = None,
             on_stage: Stage | None = None, cancel: Cancel | None = None,
             device: str | None = None) -> "records.RunRecord":
        """Build, run in the worker, judge; `timing` also times the kernel against eager and torch.compile.
        `seed` None: fresh seeds, recorded. `device` "cpu": a pure-PyTorch ModelNew judged on the CPU. `cancel`
        stops it (harness/run.py: Cancelled, no record)."""
        from cutegen.harness.run import verify_kernel

        builder = self.builder(path)
        with self.gpu_turn(cancel):
            return verify_kernel(path, builder, self.worker(), problem=self.settings.problem, trials=trials, seed=seed,
                                 timing=timing, baselines=("eager", "compile") if timing else (),
                                 state_dir=self.state_dir(path), on_stage=on_stage, cancel=cancel, device=device)

    def profile(self, path: Path, *, reference: bool = False, lines: bool = True, on_stage: Stage | None = None,
                cancel: Cancel | None = None) -> "records.RunRecord":
        """Nsight Compute on one call: kernel-level figures and, with `lines`, the per-line profile from the same
        run (the record's `lines`; what the background loop's profile stage gets). `cancel` kills ncu."""
        from cutegen.profiler import profile_kernel

        with self.gpu_turn(cancel):
            return profile_kernel(path, self.builder(path), self.worker(), problem=self.settings.problem,
                                  state_dir=self.state_dir(path), reference=reference, on_stage=on_stage, lines=lines,
                                  cancel=cancel)

    def sanitize(self, path: Path, *, tools: tuple[str, ...] | None = None,
                 on_stage: Stage | None = None) -> "records.RunRecord":
        """compute-sanitizer's tools on one call with the problem's inputs; findings at user lines."""
        from cutegen.profiler.sanitizer import TOOLS, sanitize_kernel

        with self.gpu_turn():
            return sanitize_kernel(path, self.builder(path), problem=self.settings.problem,
                                   state_dir=self.state_dir(path), tools=tools or TOOLS, on_stage=on_stage)

    def profile_program(self, argv: list[str], cwd: Path, *, kernel: str | None = None, launches: int = 1,
                        binary: str | None = None, sanitize: str | None = None):
        """The user's own command under Nsight Compute (or compute-sanitizer's `sanitize` tool): hot lines and
        findings at their source lines (profiler/program.py's ProgramRun)."""
        from cutegen.profiler import program
        from cutegen.profiler.profile import find_ncu
        from cutegen.profiler.sanitizer import MISSING, find_sanitizer

        toolchain = self.builder(cwd / "program").toolchain
        timeout = self.settings.profile_timeout
        with self.gpu_turn():
            if sanitize:
                tool = find_sanitizer(toolchain.cuda_root)
                if tool is None:
                    return program.ProgramRun(argv, problem=MISSING)
                return program.sanitize_program(argv, cwd=cwd, sanitizer=tool, toolchain=toolchain, tool=sanitize,
                                                binary=binary, timeout=timeout)
            ncu = find_ncu(self.settings.ncu, toolchain.cuda_root)
            if ncu is None:
                return program.ProgramRun(argv, problem="Nsight Compute (ncu) was not found: install it with the "
                                                        f"CUDA toolkit or set {self.settings.name_of('ncu')}")
            state = self.state_dir(cwd / "program")
            run = program.profile_program(argv, cwd=cwd, report=state.program_report(argv[0]), toolchain=toolchain,
                                          ncu=ncu, kernel=kernel, launches=launches, binary=binary, timeout=timeout)
        if run.lines is not None:  # filed for the editor: its hot lines land in the program's sources
            run.record = str(program.file_lines(state, run))
        return run

    @contextmanager
    def gpu_turn(self, cancel: Cancel | None = None):
        """Wait for the GPU (another test or profile may hold it); a cancelled waiter stops waiting."""
        while not self._gpu.acquire(timeout=0.1):
            if cancel is not None:
                cancel.check()
        try:
            yield
        finally:
            self._gpu.release()

    def cancel_build(self, path: Path) -> None:
        """Stop the build a test started (the harness builds under the Builder's default job)."""
        self.builder(path).cancel(Builder.job_key(Tier.BUILD, path))

    # -- results --------------------------------------------------------------------------------

    def latest_check(self, path: Path) -> CheckResult | None:
        """The newest check of `path`: from this session, else from its run record on disk."""
        key = str(path)
        if key not in self.results:
            record = records.latest(self.state_dir(path), key, "check")
            self.results[key] = record.check if record else None
        return self.results[key]
