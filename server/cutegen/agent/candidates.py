"""Verify a candidate text before anything is offered: check → build → test → time, as far as
this machine can, and say exactly how far that was.

The check runs on the candidate text under the real file's path (so the build cache already holds
the result when the user applies the patch and saves). Build, test and time run on a shadow copy
under `.cutegen/shadow/`: the harness loads files, and the user's file is never touched.

A candidate is model-written code. The static gate (cutegen.sandbox.gate) reviews it before anything is
built, on what the host preprocessor makes of it (the build's own `gcc -E` step, jailed); its check and build
run jailed too, seeing of the user's folders only the kernel and the quoted headers the user's own version
includes (a `.env` beside the kernel stays out of every compiler message); the built library is inspected
(cutegen.sandbox.library: imported symbols, static initializers, raw system calls) before it is loaded; its
test and timing run in the jailed worker. Without a sandbox it is offered "compiled, not run: no sandbox",
unless `cutegen.sandbox` is `off` (then it runs unjailed and every label says so). The user's own version
(text equal to the original) is never gated.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from cutegen.agent import objective
from cutegen.agent.objective import NOISE_FLOOR  # noqa: F401 (re-exported: tune.py reads it here)
from cutegen.agent.verdicts import CandidateVerdict
from cutegen.compile import Builder, Tier
from cutegen.compile.includes import user_headers
from cutegen.cancel import Cancelled  # also what verify_kernel raises for a stopped build
from cutegen.files import write_atomic
from cutegen.harness.verdicts import Verdict
from cutegen.model import CheckResult, Diagnostic
from cutegen.pairing import find_problem
from cutegen.records import RunRecord, joules_text
from cutegen.sandbox import gate, library, preprocess
from cutegen.state import StateDir
from cutegen.toolchain import ABI_INCLUDE, includes_torch, torch_include_dirs

_ids = itertools.count()
UNSANDBOXED = "ran unsandboxed: cutegen.sandbox is off"


@dataclass
class Verification:
    ok: bool  # passed every tier this machine can run (and, with a baseline, was faster)
    verdict: CandidateVerdict | str  # a CandidateVerdict, or the judge's Verdict value when the test or timing failed
    label: str  # one line for a person: what was verified
    short: str  # a few words for a code-action title: "compiled, not run"
    feedback: str = ""  # for the next round's prompt when not ok
    figures: dict = field(default_factory=dict)  # seconds per stage, timing, speedup
    tiers: list[str] = field(default_factory=list)  # the tiers that ran and passed
    record: RunRecord | None = None  # the harness's run record (its `path`: where it is stored)
    errors: list[Diagnostic] = field(default_factory=list)

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("ok", "verdict", "label", "short", "feedback", "figures", "tiers")}
        d["record"] = self.record.path if self.record is not None else None  # a transcript shows where it is
        d["errors"] = [e.to_json() for e in self.errors]
        return d


class CandidateRunner(Protocol):
    """Where a jailed candidate runs: a harness Worker (or anything with its `call` and `stop`) for a jail."""

    def __call__(self, jail): ...


class JailedWorkers:
    """A CandidateRunner: one jailed Worker (a judge, whose candidate processes run in the same jail) per jail
    configuration, started on first use and kept warm until `stop`. The engine Session owns one for every agent
    request it serves; a Verifier made without a runner owns its own."""

    def __init__(self):
        self._workers: dict = {}
        self._lock = threading.Lock()

    def __call__(self, jail):
        with self._lock:
            if jail not in self._workers:
                from cutegen.harness.worker import Worker

                self._workers[jail] = Worker(jail=jail)
            return self._workers[jail]

    def stop(self) -> None:
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.stop()


class Verifier:
    def __init__(self, builder: Builder, worker=None, *, state_dir: Path, problem: str | Path | None = None,
                 trials: int = 5, cancel: threading.Event | None = None, gpu: bool | None = None, on_stage=None,
                 candidate_runner: CandidateRunner | None = None, objective: str = "time"):
        self.builder, self.worker, self.state_dir = builder, worker, Path(state_dir)
        self.objective = objective  # what "better than the baseline" is measured by: agent/objective.py
        self.candidate_runner = candidate_runner or JailedWorkers()
        self.problem, self.trials = problem, trials
        self.cancel_event = cancel or threading.Event()
        self.on_stage = on_stage or (lambda s: None)
        self._gpu = gpu
        self._jobs: list[tuple[Builder, str]] = []
        self._runners: dict = {}  # problem → (worker or None, note)
        self._base: tuple | None = None  # (jail or None, note), decided once
        self._checkers: dict = {}  # (kernel, visible headers) → the jailed check-tier Builder
        self._originals: dict = {}  # (kernel, text digest) → the original's gate.Source, preprocessed once
        self._imports: dict = {}  # (kernel, text digest) → symbols the user's own version's library imports

    @property
    def gpu(self) -> bool:
        if self._gpu is None:
            from cutegen.toolchain import local_gpu_arch

            self._gpu = local_gpu_arch() is not None and self.worker is not None
        return self._gpu

    def cancel(self) -> None:
        """From any thread: stop the compiler and the GPU worker of the candidate in progress."""
        self.cancel_event.set()
        for builder, job in list(self._jobs):
            builder.cancel(job)
        if self.worker is not None:
            self.worker.stop()
        for worker, _ in list(self._runners.values()):
            if worker is not None and worker is not self.worker:
                worker.stop()

    def candidate_worker(self, problem: Path | None = None):
        """(the worker that runs candidates of `problem`, a note). Jailed when a sandbox can be made; None
        with the reason when it cannot; the user's own worker, with a warning note, when cutegen.sandbox
        is off. The jail sees the build cache and the problem file, nothing else of the project."""
        if problem not in self._runners:
            self._runners[problem] = self._choose_runner(problem)
        return self._runners[problem]

    def _choose_runner(self, problem: Path | None) -> tuple:
        jail, note = self._sandbox()
        if jail is None:
            return (self.worker, note) if note == UNSANDBOXED else (None, note)
        # The build cache (the .so files) and the shadow copies (ModelNew .py candidates load from there).
        shadows = StateDir(self.state_dir).shadow
        shadows.mkdir(parents=True, exist_ok=True)
        cache = [str(self.builder.cache.root.resolve())] if isinstance(self.builder, Builder) else []
        jail = jail.with_paths(readonly=[*cache, str(shadows), *([str(Path(problem).resolve())] if problem else [])])
        return self.candidate_runner(jail), ""

    def _sandbox(self) -> tuple:
        """(the sandbox's base jail, "") or (None, why not): cutegen.sandbox is off, or none can be made here."""
        if self._base is None:
            from cutegen.sandbox import Jail, availability

            settings = getattr(self.builder, "settings", None)
            key_env = getattr(settings, "llm_api_key_env", "OPENAI_API_KEY")
            if getattr(settings, "sandbox", "required") == "off":
                self._base = (None, UNSANDBOXED)
            elif not (found := availability()).ok or found.bwrap is None:  # an ok one always names its bwrap
                self._base = (None, f"no sandbox ({found.reason})")
            else:
                self._base = (Jail(found.bwrap, forbidden_env=(key_env,)), "")
        return self._base

    def problem_for(self, kernel: Path) -> Path | None:
        p = find_problem(kernel, self.problem)
        return p if p is not None and p.is_file() else None

    # -- the tiers ----------------------------------------------------------------------------

    def candidate(self, kernel: Path, text: str, *, baseline: dict | None = None, timing: bool = False,
                  original: str | None = None) -> Verification:
        """Verify `text` as the new content of `kernel`. With `baseline` (figures of the current
        version: median_ms, spread, j_per_call, energy_spread) the candidate must also be better beyond noise by
        the Verifier's objective (time, energy or edp: agent/objective.py). `original` is the
        text it was derived from (default: the file on disk; none for a new file): the gate refuses
        only what the candidate adds. The same as `judge(prepare(...))`."""
        built = self.prepare(kernel, text, baseline=baseline, timing=timing, original=original)
        return built if isinstance(built, Verification) else self.judge(built)

    def prepare(self, kernel: Path, text: str, *, baseline: dict | None = None, timing: bool = False,
                original: str | None = None) -> "Verification | Built":
        """The CPU tiers of `candidate`: gate, check, build, library inspection. A Verification when it ended
        there (failed, or nothing more can run here), else the Built candidate awaiting `judge`. Safe to call
        from several threads at once (a search builds candidates in parallel while the judge runs one)."""
        kernel = Path(kernel).resolve()
        figures: dict = {"gpu": self.gpu}
        if original is None:
            original = kernel.read_text(errors="replace") if kernel.is_file() else ""
        own = text == original  # the user's own version: never gated

        def cpu_tiers():
            view = None if own else self._host_view(kernel, text, figures, original)
            if view is not None:
                refusal = gate.review(view.source, self._original_view(kernel, original), python=kernel.suffix == ".py",
                                      system_roots=self._system_roots(),
                                      allowed_headers=self.visible_headers(kernel, original))
                if refusal is not None:
                    return _refused(refusal, figures)
            return self._cpu_tiers(kernel, text, figures, baseline, timing or baseline is not None, original, view)

        return self._guarded(figures, cpu_tiers)

    def judge(self, built: "Built") -> Verification:
        """The GPU tiers of `candidate` for a Built one: test, then time (and compare with its baseline). One at a
        time: the judge is one process on one GPU."""
        verification = self._guarded(built.figures, lambda: self._gpu_tiers(built))
        assert isinstance(verification, Verification)  # the GPU tiers end in one, whatever happens
        return verification

    def _guarded(self, figures: dict, run) -> "Verification | Built":
        """`run()`, with no end of it escaping: cancelled or a failure of ours become named verdicts; a Verification
        run unjailed says so."""
        try:
            v = run()
        except Cancelled:
            return Verification(False, CandidateVerdict.CANCELLED, "cancelled", "cancelled", figures=figures)
        except Exception as e:  # noqa: BLE001 (no end of a verification escapes: the editor gets a named verdict)
            why = f"the verification itself failed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
            return Verification(False, CandidateVerdict.JUDGE_ERROR, why, "verification failed", feedback=why,
                                figures=figures)
        if isinstance(v, Verification) and figures.get("sandbox") == "off":  # never silently: label, title, transcript
            v.label += f" · {UNSANDBOXED}"
            v.short += " (unsandboxed)"
        return v

    def _cpu_tiers(self, kernel, text, figures, baseline, timing, original, view) -> "Verification | Built":
        check = self._build(Tier.CHECK, self.check_builder(kernel, original), kernel, text, figures, "check_s")
        if not check.ok:
            return _failed(CandidateVerdict.CHECK_FAILED, "does not compile", check, kernel, kernel, figures, [])
        if view is not None and view.error:  # it compiles for the device, yet its host side cannot be read
            why = (f"refused before building: the candidate's host code does not preprocess ({view.error}), so "
                   "the gate cannot see what it does")
            return Verification(False, CandidateVerdict.REFUSED,
                                why, "refused: unreadable host code", feedback=why, figures=figures,
                                tiers=["check"])
        shadow, builder = self.shadow(kernel, text, original)
        build = self._build(Tier.BUILD, builder, shadow, None, figures, "build_s")
        if not build.ok or build.artifact is None:  # an ok build has its library: nvcc exited 0 and wrote it
            return _failed(CandidateVerdict.BUILD_FAILED,
                           "compiles, but the library does not build", build, shadow, kernel,
                           figures, ["check"])
        tiers = ["check", "build"]
        inspected = self._inspect(kernel, text, original, build.artifact, view, figures, tiers)
        if inspected is not None:
            return inspected
        problem = self.problem_for(kernel)
        if problem is None:
            return Verification(True, CandidateVerdict.VERIFIED,
                                f"compiled and built · not tested: no problem paired with {kernel.name}",
                                "compiled, not tested", figures=figures, tiers=tiers)
        if not self.gpu:
            return Verification(True, CandidateVerdict.VERIFIED, "compiled and built · not run: no GPU on this machine",
                                "compiled, not run", figures=figures, tiers=tiers)
        return Built(kernel, text, shadow, builder, problem, figures, tiers, baseline, timing)

    def _gpu_tiers(self, b: "Built") -> Verification:
        shadow, builder, problem, figures, tiers = b.shadow, b.builder, b.problem, b.figures, b.tiers
        runner, note = self.candidate_worker(problem)
        figures["sandbox"] = "off" if note == UNSANDBOXED else "jailed" if runner is not None else "unavailable"
        if runner is None:
            return Verification(True, CandidateVerdict.VERIFIED, f"compiled and built · not run: {note}",
                                "compiled, not run: no sandbox", figures=figures, tiers=tiers)
        record = self._harness(shadow, builder, problem, figures, "test_s", timing=False)
        if record.verdict != Verdict.PASS:
            return Verification(False, record.verdict, f"{record.verdict}: {record.message}", record.verdict,
                                feedback=_test_feedback(record), figures=figures, tiers=tiers, record=record)
        tiers.append("test")
        correct = f"correct on {self.trials} trials"
        if not b.timing:
            return Verification(True, CandidateVerdict.VERIFIED,
                                f"compiles · {correct}", correct, figures=figures, tiers=tiers,
                                record=record)
        timed = self._harness(shadow, builder, problem, figures, "time_s", timing=True, trials=1)
        if timed.verdict != Verdict.PASS or timed.timing is None:  # flaky: passed 5 trials, failed the timed one
            return Verification(False, timed.verdict, f"{timed.verdict}: {timed.message}", timed.verdict,
                                feedback=_test_feedback(timed), figures=figures, tiers=tiers, record=timed)
        tiers.append("time")
        t = timed.timing
        figures.update(median_ms=t.median_ms, spread=t.spread, timing_trials=t.trials)
        if timed.throughput is not None:
            figures["gb_per_s"] = timed.throughput.gb_per_s
        e = timed.energy
        if e is not None:
            figures.update(j_per_call=e.j_per_call, energy_spread=e.spread, watts=e.watts)
        elif timed.energy_unmeasured:
            figures["energy_unmeasured"] = timed.energy_unmeasured
        if b.baseline is None:
            per_call = f" · {joules_text(e.j_per_call)}/call" if e is not None else ""
            return Verification(True, CandidateVerdict.VERIFIED,
                                f"compiles · {correct} · {t.median_ms:.3f} ms{per_call}", correct,
                                figures=figures, tiers=tiers, record=timed)
        return _compare(b.baseline, figures, correct, tiers, timed, self.objective)

    def _build(self, tier: Tier, builder: Builder, path: Path, text: str | None, figures: dict, key: str) -> CheckResult:
        if self.cancel_event.is_set():
            raise Cancelled
        self.on_stage(tier.value)
        job = f"agent-{tier.value}:{path}:{next(_ids)}"
        self._jobs.append((builder, job))
        started = time.perf_counter()
        try:
            result = builder.run(tier, path, text, job=job)
        finally:
            self._jobs.remove((builder, job))
        figures[key] = round(time.perf_counter() - started, 3)
        figures[key.replace("_s", "_cached")] = result.cached
        if result.cancelled or self.cancel_event.is_set():
            raise Cancelled
        return result

    def _harness(self, shadow: Path, builder: Builder, problem: Path, figures: dict, key: str, *, timing: bool,
                 trials: int | None = None) -> RunRecord:
        from cutegen.harness.run import verify_kernel

        if self.cancel_event.is_set():
            raise Cancelled
        self.on_stage("time" if timing else "test")
        started = time.perf_counter()
        record = verify_kernel(shadow, builder, self.candidate_worker(problem)[0], problem=problem, trials=trials or self.trials,
                               timing=timing, state_dir=self.state_dir, gpu=self._gpu)
        figures[key] = round(time.perf_counter() - started, 3)
        if self.cancel_event.is_set():
            raise Cancelled
        return record

    # -- shadow copies ------------------------------------------------------------------------

    def shadow(self, kernel: Path, text: str, original: str | None = None) -> tuple[Path, Builder]:
        """A copy of `text` under .cutegen/shadow/, alone in its folder, and a builder that still finds the
        kernel's own headers (its directory is on the include path; the jail shows only those headers of it)."""
        path = self._shadow_path(kernel, text)
        if not path.exists() or path.read_text(errors="replace") != text:
            write_atomic(path, text)
        if not isinstance(self.builder, Builder):
            return path, self.builder  # a stand-in builder (tests) serves the shadow too
        s = self.builder.settings
        settings = replace(s, include_dirs=[*s.include_dirs, str(kernel.parent)])
        builder = Builder(self.builder.toolchain, settings, self.builder.cache.root.parent, roots=self.builder.roots)
        builder.configure_as(path, kernel)  # the kernel's compile_commands.json entry, not the shadow's defaults
        builder.jail = self.build_jail(kernel, original)
        return path, builder

    def _shadow_path(self, kernel: Path, text: str) -> Path:
        digest = hashlib.sha256(f"{kernel}\0{text}".encode()).hexdigest()[:12]
        folder = StateDir(self.state_dir).shadow / f"{kernel.stem}-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / kernel.name

    def build_jail(self, kernel: Path | None = None, original: str | None = None):
        """The jail nvcc runs in on candidate text, or None when the sandbox is off or cannot be made (then
        the gate alone stands between the text and the compiler, and nothing built is run). For a `kernel`:
        its folder and the user's include folders are not bound, only the quoted headers its own version
        (`original`, default the file on disk) includes."""
        jail = self._sandbox()[0]
        if jail is None or kernel is None:
            return jail
        kernel = Path(kernel).resolve()
        roots = self._system_roots()
        mine = [d for d in (str(kernel.parent), *getattr(self.builder.settings, "include_dirs", []))
                if not os.path.realpath(d).startswith(roots)]
        return jail.with_paths(readonly=self.visible_headers(kernel, original), hidden=mine)

    def program_jail(self, kernel: Path) -> tuple:
        """Where a program that runs candidate code outside the worker (ncu) runs: (jail, ""); (None, "") where the
        user turned the sandbox off; (None, why not) where none can be made (then it must not run)."""
        jail, note = self._sandbox()
        if jail is None:
            return None, "" if note == UNSANDBOXED else note
        return self.build_jail(kernel), ""

    def visible_headers(self, kernel: Path, original: str | None = None) -> tuple[str, ...]:
        """The user's quoted headers the original includes (followed recursively): all a candidate may include
        of the user's, and all its compile sees of the user's folders."""
        if original is None:
            original = kernel.read_text(errors="replace") if kernel.is_file() else ""
        dirs = [Path(d) for d in getattr(getattr(self.builder, "settings", None), "include_dirs", [])]
        return tuple(sorted(str(h) for h in user_headers(original, kernel.parent, dirs)))

    def check_builder(self, kernel: Path, original: str | None = None):
        """The builder for the check tier on model-written text (every compile of it, a tool call's too): jailed
        with the kernel's view, sharing the user's build cache (so the result is there when the user applies
        the patch and saves)."""
        if not isinstance(self.builder, Builder) or self.build_jail() is None:
            return self.builder
        key = (str(kernel), self.visible_headers(kernel, original))
        if key not in self._checkers:
            checker = Builder(self.builder.toolchain, self.builder.settings, self.builder.cache.root.parent,
                              roots=self.builder.roots)
            checker.jail = self.build_jail(kernel, original)
            self._checkers[key] = checker
        return self._checkers[key]

    # -- the gate's views -----------------------------------------------------------------------

    def _host_view(self, kernel: Path, text: str, figures: dict, original: str) -> "_View":
        """The candidate as the host compiler's preprocessor sees it (the build's flags, jailed), or its raw text
        where no preprocessing can be done here (a stand-in builder, a ModelNew file)."""
        if not isinstance(self.builder, Builder) or kernel.suffix == ".py":
            return _View(gate.Source(text))
        if self.cancel_event.is_set():
            raise Cancelled
        self.on_stage("gate")
        source = self._shadow_path(kernel, text)
        write_atomic(source, text)
        flags = self.builder._flags(Tier.BUILD, kernel, includes_torch(text))  # the build's own flags
        done = preprocess.host_view([self.builder.toolchain.nvcc, *flags], source, self.build_jail(kernel, original),
                                    timeout=self.builder.settings.check_timeout)
        figures["gate_s"] = round(done.seconds, 3)
        return _View(gate.Source(text, done.preprocessed), done.error)

    def _original_view(self, kernel: Path, original: str) -> gate.Source:
        key = (str(kernel), hashlib.sha256(original.encode()).hexdigest())
        if key not in self._originals:
            view = self._host_view(kernel, original, {}, original) if original else _View(gate.Source(""))
            self._originals[key] = view.source
        return self._originals[key]

    def _system_roots(self) -> tuple[str, ...]:
        """Where library headers live: the toolkit, CUTLASS, the ABI header, the system's and torch's."""
        tc = getattr(self.builder, "toolchain", None)
        roots = [getattr(tc, "cuda_root", ""), getattr(tc, "cutlass_include", ""), str(ABI_INCLUDE), "/usr/include",
                 "/usr/lib", "/usr/local/include", *torch_include_dirs()]
        return tuple(os.path.realpath(r).rstrip("/") + "/" for r in roots if r)

    def _inspect(self, kernel, text, original, artifact: str, view, figures, tiers) -> Verification | None:
        """The built library, before anything loads it: the user's own version's imports are remembered (its
        later candidates may import the same); a candidate's must keep to the allow-lists."""
        if kernel.suffix == ".py":  # a ModelNew file: load_inline builds its library in the jailed worker itself
            return None
        key = (str(kernel), hashlib.sha256(text.encode()).hexdigest())
        if view is None:
            if not library.missing_tools():
                self._imports[key] = {s for s, _ in library.imports(artifact)}
            return None
        missing = library.missing_tools()
        if missing:
            why = f"the built library cannot be inspected: {', '.join(missing)} (binutils) not found"
            return Verification(True, CandidateVerdict.VERIFIED,
                                f"compiled and built · not run: {why}", "compiled, not run",
                                figures=figures, tiers=tiers)
        started = time.perf_counter()
        own = self._imports.get((str(kernel), hashlib.sha256(original.encode()).hexdigest()))
        allowed = frozenset(own if own is not None else
                            (u.name for u in gate.uses(self._original_view(kernel, original))))
        refusal = library.review(artifact, allowed=allowed, find_line=lambda name: _line_of(name, view, text))
        figures["inspect_s"] = round(time.perf_counter() - started, 3)
        return _refused(refusal, figures, tiers) if refusal is not None else None

    def clean_shadows(self, keep: int = 50) -> None:
        """Shadow copies are build inputs only; keep the newest few for inspection."""
        folders = sorted(StateDir(self.state_dir).shadow.glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in folders[keep:]:
            shutil.rmtree(old, ignore_errors=True)


@dataclass
class Built:
    """A candidate that passed the CPU tiers (gate, check, build, inspection) and waits for the judge."""

    kernel: Path
    text: str
    shadow: Path
    builder: Builder
    problem: Path
    figures: dict
    tiers: list[str]
    baseline: dict | None
    timing: bool


@dataclass
class _View:
    source: gate.Source
    error: str = ""  # why the host side could not be preprocessed


def _refused(refusal: gate.Refusal, figures: dict, tiers: list[str] | None = None) -> Verification:
    return Verification(False, CandidateVerdict.REFUSED,
                        refusal.reason, "refused: unsafe host code", feedback=refusal.reason,
                        figures=figures, tiers=tiers or [])


def _line_of(name: str, view: _View, text: str) -> int:
    """The candidate's line that spells `name` (after preprocessing: a pasted `CAT(sys,tem)` spells system), or 0."""
    pre = view.source.preprocessed
    for t in pre.tokens if pre is not None else []:
        if (t.kind == "id" and t.text == name) or (t.kind in ("str", "raw") and name in t.text):
            return t.line
    for i, line in enumerate(text.splitlines(), 1):
        if re.search(rf"\b{re.escape(name)}\b", line):
            return i
    return 0


def _compare(baseline: dict, figures: dict, correct: str, tiers: list[str], record: RunRecord,
             goal: str = "time") -> Verification:
    """Better than `baseline` by the objective `goal` (agent/objective.py), beyond the noise of that figure."""
    before, after = objective.score(goal, baseline), objective.score(goal, figures)
    figures["objective"] = goal
    before_ms, after_ms = baseline.get("median_ms"), figures.get("median_ms")
    if before_ms and after_ms:  # the time ratio, whatever the objective
        figures.update(baseline_ms=before_ms, speedup=round(before_ms / after_ms, 4))
    if isinstance(before, str) or isinstance(after, str):  # no silent fall back to time: the person chose this
        why = after if isinstance(after, str) else f"the current version's: {before}"
        return Verification(False, CandidateVerdict.NOT_FASTER,
                            f"compiles · {correct} · not compared by {goal}: {why}", f"not compared ({goal})",
                            feedback=f"The change was correct, but it cannot be compared by {goal}: {why}.",
                            figures=figures, tiers=tiers, record=record)
    ratio, noise = objective.gain(before, after)
    figures.update(gain=round(ratio, 4), noise=round(noise, 4))
    words = objective.WORDS[goal]
    change = objective.change(before, after)
    if ratio > 1 + noise:
        return Verification(True, CandidateVerdict.VERIFIED,
                            f"compiles · {correct} · {ratio:.2f}× {words.better} than before ({change})",
                            f"{ratio:.2f}× {words.better}, correct", figures=figures, tiers=tiers, record=record)
    what = words.worse if ratio < 1 - noise else f"not {words.what} beyond noise"
    return Verification(False, CandidateVerdict.NOT_FASTER,
                        f"compiles · {correct} · {what}: {change} ({ratio:.2f}×, noise ±{noise:.0%})",
                        what, feedback=f"The change was correct but {what}: {change} ({ratio:.2f}×; the measured "
                                       f"noise is ±{noise:.0%}).", figures=figures, tiers=tiers, record=record)


def _failed(verdict: CandidateVerdict, what: str, result: CheckResult, built: Path, kernel: Path, figures: dict,
            tiers: list[str]) -> Verification:
    errors = [_relocate(d, built, kernel) for d in result.errors]
    lines = [f"{what}:"] + [describe_diagnostic(d) for d in errors[:3]]
    first = errors[0].message if errors else "see the build log"
    return Verification(False, verdict, f"{what}: {first}", what, feedback="\n".join(lines), figures=figures,
                        tiers=tiers, errors=errors)


def _relocate(d: Diagnostic, built: Path, kernel: Path) -> Diagnostic:
    """Diagnostics of the shadow copy, named by the user's file."""
    if d.file == str(built):
        d = replace(d, file=str(kernel))
    return d


def describe_diagnostic(d: Diagnostic, explanation_chars: int = 600) -> str:
    text = f"- line {d.line}: {d.message}"
    if d.root and d.root not in d.message:
        text += f"\n  root cause: {d.root}"
    if d.explanation:
        text += "\n  " + d.explanation[:explanation_chars].replace("\n", "\n  ")
    return text


def _test_feedback(record: RunRecord) -> str:
    text = f"The harness verdict is `{record.verdict}`: {record.message}"
    if record.mismatch is not None:
        m = record.mismatch
        keep = {"pattern": m.pattern, "bad": m.bad, "total": m.total, "max_abs": m.max_abs,
                "first_bad_index": m.first_bad_index, "expected": m.expected, "got": m.got}
        text += f"\nMismatch: {keep}"
    return text
