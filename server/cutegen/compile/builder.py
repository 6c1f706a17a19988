"""One engine API for the build tiers, with a content-hash cache and per-file cancellation.

`check` runs `nvcc -ptx` (front end and device code only: 2.4 s where `-c` takes 12.8 s on a small
CuTe kernel) and then `ptxas -v` on that PTX (tens of milliseconds) for registers, spills and the
warnings ptxas alone gives. `build` produces the shared library the harness loads (no torch headers).
`probe` is the layout probe's compile (layouts/probe.py): the check's front end, no output, every error kept;
its caller reads the log (`compile`), not a diagnosis.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Callable

from cutegen.compile.cache import BuildCache, cache_key, diagnosis_code
from cutegen.compile.compile_commands import HEADER_SUFFIXES
from cutegen.compile.configuration import FileFlags, configure
from cutegen.compile.includes import user_headers
from cutegen.compile.inline_sources import (
    as_cuda_file, checked_lines, cuda_sources, include_path_warnings, syntax_error,
)
from cutegen.compile.launcher import missing_launcher
from cutegen.compile.progress import finished_phases, how_far
from cutegen.diagnostics.assemble import diagnose, file_level
from cutegen.compile.fitness import not_checked, unfit
from cutegen.files import resolved, write_atomic
from cutegen.model import CheckResult, Diagnostic, KernelResources, Severity
from cutegen.pairing import find_problem
from cutegen.settings import Settings
from cutegen.state import NAME as STATE_NAME
from cutegen.state import StateDir, workspace_root
from cutegen.toolchain import ABI_INCLUDE, TORCH_NVCC_FLAGS, Toolchain, includes_torch, torch_include_dirs


class Tier(str, Enum):
    CHECK = "check"
    BUILD = "build"
    PROBE = "probe"


_ARTIFACT = {Tier.CHECK: ".ptx", Tier.BUILD: ".so", Tier.PROBE: None}  # None: nothing is kept (-o /dev/null)
_PRE_INCLUDE = "cutegen_pre_include.h"


@dataclass
class _Job:
    tier: Tier
    proc: subprocess.Popen | None = None
    cancelled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class CompileOutcome:
    """What the compiler did: the part of a build that is cached."""

    returncode: int
    ptxas_ok: bool
    log: str
    command: list[str]
    seconds: float
    artifact: str | None
    timed_out: bool = False
    cancelled: bool = False
    timeout: float = 0.0
    torch: bool = False  # the source includes PyTorch's headers (its check timeout is scaled)
    progress: str = ""  # when cut by the timeout: how far it got


@dataclass
class _Step:
    returncode: int
    output: str
    timed_out: bool = False


class Builder:
    def __init__(self, toolchain: Toolchain, settings: Settings, state_dir: Path, roots: list[Path] | None = None):
        self.toolchain = toolchain
        self.settings = settings
        self.cache = BuildCache(StateDir(state_dir).build_cache)
        # Workspace folders: their build*/ folders hold compile_commands.json (compile/compile_commands.py).
        self.roots = list(roots) if roots else [StateDir(state_dir).path.parent]
        self._includer: dict[Path, Path] = {}  # header → the last .cu seen including it (a header's translation unit)
        self._configured_as: dict[Path, Path] = {}  # a shadow copy → the user's file whose flags it is built with
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._demangler = toolchain.tool("cu++filt") or toolchain.tool("c++filt")
        self.jail = None  # a cutegen.sandbox.Jail: the compiler runs inside it (model-written candidates)
        # Library and system headers: everything else is the user's (asked for every frame of every message).
        self._system = tuple(os.path.realpath(s) + os.sep for s in (
            toolchain.cutlass_include, str(ABI_INCLUDE), toolchain.cuda_root, "/usr/include", "/usr/lib",
            "/usr/local/include", *torch_include_dirs(), *_isystem_dirs(settings.extra_flags)))
        # Headers whose warnings are never the user's business (CuTe's are: a dropped host functor warns there).
        self._quiet = tuple(os.path.realpath(s) + os.sep for s in (
            *torch_include_dirs(), *_isystem_dirs(settings.extra_flags), "/usr/include"))
        self._library: tuple[str, ...] = ()  # a project's own CUTLASS and -isystem folders, as files name them

    # -- public API ---------------------------------------------------------------------------

    def run(self, tier: Tier, path: str | Path, text: str | None = None, *, job: str | None = None,
            on_stage: Callable[[str], None] | None = None) -> CheckResult:
        """Build `path` (or the unsaved `text` of it) at `tier`.

        A newer run with the same `job` key (default: tier + file) cancels this one: its compiler is
        killed and this call returns a result with `cancelled=True`.
        """
        if tier is Tier.PROBE:
            raise ValueError("the probe tier's log is not a diagnosis: read it with Builder.compile")
        path = resolved(path)
        reason = unfit(path, text)  # the same files refused in the editor and the CLI
        if reason:
            return not_checked(path, reason, tier.value)
        unit = self.file_flags(path).translation_unit
        if path.suffix in HEADER_SUFFIXES and unit:
            return self._through_unit(tier, path, Path(unit), text, job, on_stage)
        data = text.encode() if text is not None else path.read_bytes()
        source = data.decode("utf-8", errors="replace")
        compiled = source
        if path.suffix == ".py":  # a ModelNew file: its load_inline CUDA sources, reported at the Python lines
            inline = cuda_sources(source)
            if not inline:
                return self._not_cuda(tier, path, source)
            compiled = as_cuda_file(path, inline)
        key = self._key(tier, path, source, compiled)
        hit = self.cache.get(key)
        if hit is not None:
            return self._result(tier, path, source, CompileOutcome(**hit), cached=True, key=key)
        outcome, stored, cached = self._compile_and_store(tier, path, compiled, key, job, on_stage)
        return self._result(tier, path, source, outcome, cached=cached, key=key if stored else None)

    def compile(self, tier: Tier, path: str | Path, text: str, *, pre_include: str = "",
                job: str | None = None) -> tuple[CompileOutcome, bool]:
        """The compiler's outcome for `text` as `path` (a .cu text), undiagnosed: the probe reads its log itself.
        `pre_include`: a header's text, included before the file. Returns (outcome, whether it was cached);
        cancelled as run() is."""
        path = resolved(path)
        key = self._key(tier, path, text, text, pre_include)
        hit = self.cache.get(key)
        if hit is not None:
            return CompileOutcome(**hit), True
        outcome, _, cached = self._compile_and_store(tier, path, text, key, job, None, pre_include)
        return outcome, cached

    def stored(self, tier: Tier, path: str | Path, text: str, *, pre_include: str = "") -> CompileOutcome | None:
        """What compile() would return from the cache, without compiling; None when nothing is stored."""
        hit = self.cache.get(self._key(tier, resolved(path), text, text, pre_include))
        return CompileOutcome(**hit) if hit is not None else None

    def configure_as(self, path: str | Path, original: str | Path) -> None:
        """Build `path` (a candidate's shadow copy) with the flags of `original` (the user's file)."""
        self._configured_as[resolved(path)] = resolved(original)

    def file_flags(self, path: str | Path) -> FileFlags:
        """`path`'s flags and where they came from (settings, its compile_commands.json, defaults): what every tier
        compiles it with, the type tier included (`FileFlags.common()`), and what `cutegen check -v` names."""
        path = resolved(path)
        path = self._configured_as.get(path, path)
        flags = configure(path, self.toolchain, self.settings, [*self.roots, workspace_root(path)],
                          includer=self._includer.get(path))
        self._library = tuple(dict.fromkeys((*self._library, *(os.path.realpath(d) + os.sep
                                                                for d in flags.library_dirs()))))
        return flags

    @staticmethod
    def job_key(tier: Tier, path: str | Path) -> str:
        """The default `job` of run(): cancel(job_key(tier, path)) stops a run started without one."""
        return f"{tier.value}:{path}"

    def cancel(self, job: str) -> None:
        with self._lock:
            handle = self._jobs.get(job)
        if handle:
            _cancel(handle)

    def busy(self) -> bool:
        """Whether a compile runs (the type tier's warm builds wait for none: typecheck/warm.py)."""
        with self._lock:
            return bool(self._jobs)

    def cancel_all(self, tier: Tier) -> None:
        """Cancel every run of `tier` (the layout probes, when the server shuts down)."""
        with self._lock:
            handles = [h for h in self._jobs.values() if h.tier is tier]
        for handle in handles:
            _cancel(handle)

    # -- compiling ----------------------------------------------------------------------------

    def _key(self, tier: Tier, path: Path, source: str, compiled: str, pre_include: str = "") -> str:
        # The path is part of the key: the cached log names the file, and two files with equal text must
        # not share diagnostics.
        flags = self._flags(tier, path, includes_torch(compiled))
        own = [Path(d) for kind, d in self.file_flags(path).includes
               if kind == "-I" and not self._is_library(d) and Path(d) != ABI_INCLUDE]
        headers = user_headers(source, path.parent, own)
        if path.suffix == ".cu" and STATE_NAME not in path.parts:  # not a candidate's shadow copy
            for header in headers:
                self._includer[header] = path
        return cache_key(tier=tier.value, fingerprint=self.toolchain.fingerprint,
                         command_flags=[str(path), *flags, pre_include], text=source, headers=headers)

    def _compile_and_store(self, tier: Tier, path: Path, compiled: str, key: str, job: str | None, on_stage,
                           pre_include: str = "") -> tuple[CompileOutcome, bool, bool]:
        """Compile in the cache entry and store the outcome; returns it, whether it is stored, and whether it came
        from the cache after all (another compile of the same key, waited for, stored it first)."""
        job_key = job or self.job_key(tier, path)
        handle = self._start_job(job_key, tier)  # before the wait: a newer run cancels this one while it waits
        try:
            with self.cache.compiling(key, lambda: handle.cancelled) as claimed:
                if not claimed:
                    return self._cancelled(tier, path, compiled), False, False
                hit = self.cache.get(key)
                if hit is not None:
                    return CompileOutcome(**hit), True, True
                return (*self._compile_in_entry(tier, path, compiled, key, handle, on_stage, pre_include), False)
        finally:
            self._end_job(job_key, handle)

    def _compile_in_entry(self, tier: Tier, path: Path, compiled: str, key: str, handle: "_Job", on_stage,
                          pre_include: str) -> tuple[CompileOutcome, bool]:
        copy, cacheable = _source_copy(self.cache.entry(key), path.name if path.suffix != ".py" else path.stem + ".cu",
                                       compiled)
        if pre_include:
            write_atomic(copy.parent / _PRE_INCLUDE, pre_include)
        outcome = self._compile(tier, path, copy, handle, on_stage, includes_torch(compiled), bool(pre_include))
        # Killed by a signal (a cancel, a timeout, the OOM killer): no verdict on the text, not stored.
        stored = cacheable and not outcome.cancelled and not outcome.timed_out and outcome.returncode >= 0
        if stored:
            try:
                self.cache.put(key, asdict(outcome))
            except OSError:
                stored = False  # a full disk: the result is right, only not cached (the caller's record says why)
        return outcome, stored

    def _cancelled(self, tier: Tier, path: Path, compiled: str) -> CompileOutcome:
        """The outcome of a run cancelled before its compiler started (while it waited for another's)."""
        flags = self._flags(tier, path, includes_torch(compiled))
        return CompileOutcome(returncode=-1, ptxas_ok=False, log="", command=[self.toolchain.nvcc, *flags, str(path)],
                       seconds=0.0, artifact=None, cancelled=True)

    def _flags(self, tier: Tier, path: Path, torch: bool = False) -> list[str]:
        tc, s = self.toolchain, self.settings
        lineinfo = ["-lineinfo"] if tier is not Tier.PROBE else []  # the probe writes no code to map
        flags = [*tc.gencode, *lineinfo, *self.file_flags(path).nvcc()]
        if path.suffix in HEADER_SUFFIXES:  # a header no .cu includes yet: compiled as a translation unit itself
            flags += ["-x", "cu"]
        if torch:  # as torch.utils.cpp_extension compiles it; -isystem: torch's own warnings are not the user's
            flags += [f for d in torch_include_dirs() for f in ("-isystem", d)] + list(TORCH_NVCC_FLAGS)
        if tier is Tier.BUILD:
            # -cudart shared: the library uses the process's one CUDA runtime (torch's), which Nsight Compute
            # intercepts; a statically linked runtime hides the kernels from ncu.
            flags += ["-O3", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-Xptxas", "-v"]
        elif tier is Tier.PROBE:
            # -w: only the probes' errors matter; the error limit (100 by default) would drop probes.
            flags += ["-ptx", "-w", "-Xcicc", "--error_limit=1000000"]
        else:
            flags += ["-ptx"]
        return flags + list(s.extra_flags)

    def _timeout(self, tier: Tier, torch: bool) -> float:
        if tier is Tier.CHECK:
            return self.settings.check_timeout_for(torch)
        return self.settings.check_timeout if tier is Tier.PROBE else self.settings.build_timeout

    def _compile(self, tier: Tier, path: Path, copy: Path, job: _Job, on_stage, torch: bool,
                 pre_include: bool) -> "CompileOutcome":
        flags = self._flags(tier, path, torch)
        suffix = _ARTIFACT[tier]
        artifact = copy.with_suffix(suffix) if suffix else Path(os.devnull)
        timing = copy.with_suffix(".time.csv")  # nvcc's per-phase times: how far a cut compile got
        timing.unlink(missing_ok=True)
        before = ["--pre-include", str(copy.parent / _PRE_INCLUDE)] if pre_include else []
        command = [self.toolchain.nvcc, *flags, *before, "-time", str(timing), str(copy), "-o", str(artifact)]
        timeout = self._timeout(tier, torch)
        started = time.perf_counter()
        if on_stage:
            on_stage("nvcc")
        step = self._run(command, job, timeout)
        log, ptxas_ok = step.output, True
        progress = how_far(tier.value, finished_phases(timing)) if step.timed_out else ""
        if tier is Tier.CHECK and step.returncode == 0 and not job.cancelled:
            if on_stage:
                on_stage("ptxas")
            ptxas = [self.toolchain.tool("ptxas") or "ptxas", f"-arch={self.toolchain.ptxas_arch}", "-v", str(artifact),
                     "-o", str(artifact.with_suffix(".cubin"))]
            pstep = self._run(ptxas, job, timeout)
            log += pstep.output
            ptxas_ok = pstep.returncode == 0
            step.timed_out |= pstep.timed_out
            progress = how_far(tier.value, [], after_nvcc="ptxas -v") if pstep.timed_out else progress
        return CompileOutcome(
            returncode=step.returncode, ptxas_ok=ptxas_ok, log=log.replace(str(copy), str(path)),
            command=[self.toolchain.nvcc, *flags, str(path), "-o", str(artifact)], seconds=time.perf_counter() - started,
            artifact=str(artifact) if suffix and step.returncode == 0 and ptxas_ok and artifact.exists() else None,
            timed_out=step.timed_out, cancelled=job.cancelled, timeout=timeout, torch=torch, progress=progress,
        )

    def _result(self, tier: Tier, path: Path, source: str, o: "CompileOutcome", cached: bool,
                key: str | None) -> CheckResult:
        """The result of a compile's outcome; `key`: the cache entry its diagnosis is read from and stored in."""
        ptx = Path(o.artifact) if tier is Tier.CHECK and o.artifact else None
        flags = self.file_flags(path)
        diagnostics, resources = self._diagnosis(key, o.log, path, source, ptx)
        if o.timed_out:
            diagnostics.insert(0, file_level(path, self._timeout_message(tier, o), "timeout"))
        elif o.returncode != 0 and not o.cancelled and not any(d.severity is Severity.ERROR for d in diagnostics):
            tail = "\n".join(o.log.strip().splitlines()[-3:]) or f"exit code {o.returncode}"
            diagnostics.insert(0, file_level(path, f"nvcc failed: {tail}", "nvcc-failed"))
        for d in diagnostics if flags.database else ():  # a flag nvcc refused: say which file it came from
            if d.severity is Severity.ERROR and (d.code == "nvcc-failed" or d.message.startswith("nvcc fatal")):
                d.message += f" (flags from {flags.source})"
        diagnostics += [Diagnostic(file=str(path), line=1, col=1, end_col=2, severity=Severity.WARNING, message=p,
                                   code="build-configuration") for p in flags.problems]
        if not source.strip():  # it compiles, and says nothing: "ok" alone would read as a checked kernel
            diagnostics.append(Diagnostic(file=str(path), line=1, col=1, end_col=2, severity=Severity.WARNING,
                                          message=f"{path.name} is empty: there is no kernel to check", code="empty-file"))
        if o.returncode == 0 and path.suffix != ".py":
            problem = find_problem(path, self.settings.problem)
            warning = missing_launcher(path, source, problem) if problem else None
            diagnostics += [warning] if warning else []
        if path.suffix == ".py":  # what only torch's own build would miss
            diagnostics += include_path_warnings(path, source)
        ok = o.returncode == 0 and o.ptxas_ok and not o.cancelled and not any(
            d.severity is Severity.ERROR for d in diagnostics)
        return CheckResult(file=str(path), tier=tier.value, ok=ok, diagnostics=diagnostics, resources=resources,
                           raw_log=o.log, command=o.command, seconds=0.0 if cached else o.seconds, cached=cached,
                           artifact=o.artifact if ok else None, cancelled=o.cancelled,
                           configuration=flags.describe())

    def _through_unit(self, tier: Tier, header: Path, unit: Path, text: str | None, job: str | None,
                      on_stage) -> CheckResult:
        """A header checked through a .cu that includes it (its compile_commands.json entry, or the last .cu seen
        including it): the unit's diagnostics that land in the header, and one line when the unit fails elsewhere.
        The header is read from disk: its unsaved text is checked on save."""
        result = self.run(tier, unit, job=job or self.job_key(tier, header), on_stage=on_stage)
        mine = [d for d in result.diagnostics if resolved(d.file) == header]
        elsewhere = [d for d in result.errors if resolved(d.file) != header]
        if elsewhere:
            first = elsewhere[0]
            mine.insert(0, file_level(header, f"checked through {unit.name}, which has {len(elsewhere)} error(s) "
                                              f"outside this header (first: {Path(first.file).name}:{first.line}: "
                                              f"{first.message.splitlines()[0]})", "unit-failed"))
            mine[0].severity = Severity.WARNING
        if text is not None and header.is_file() and text != header.read_text(errors="replace"):
            mine.append(Diagnostic(file=str(header), line=1, col=1, end_col=2, severity=Severity.INFO,
                                   message=f"checked as saved, through {unit.name}: save to check these edits",
                                   code="header-unsaved"))
        ok = result.ok and not any(d.severity is Severity.ERROR for d in mine)
        return CheckResult(file=str(header), tier=tier.value, ok=ok, diagnostics=mine, resources=result.resources,
                           raw_log=result.raw_log, command=result.command, seconds=result.seconds,
                           cached=result.cached, artifact=result.artifact, cancelled=result.cancelled,
                           configuration=self.file_flags(header).describe())

    def _timeout_message(self, tier: Tier, o: "CompileOutcome") -> str:
        setting = self.settings.name_of(tier.value + "_timeout")
        which = f"the {tier.value} timeout: setting {setting}"
        if tier is Tier.CHECK and o.torch:
            which = (f"the check timeout of a source that includes PyTorch's headers: "
                     f"{self.settings.TORCH_CHECK_FACTOR:g} × {setting}")
        return f"nvcc did not finish within {o.timeout:g} s ({which})" + (f"; {o.progress}" if o.progress else "")

    def _not_cuda(self, tier: Tier, path: Path, source: str) -> CheckResult:
        message = ("no CUDA to check: cutegen checks .cu kernels and ModelNew files whose CUDA sources are passed "
                   "to load_inline(cuda_sources=...) as string literals or names bound to them")
        d = file_level(path, message, "no-cuda-sources")
        broken = syntax_error(source)
        if broken:  # the strings cannot be found in a file Python cannot read: say that, where
            d = file_level(path, f"Python syntax error: {broken[1]} (the load_inline sources cannot be read)",
                            "python-syntax")
            d.line = broken[0]
        return CheckResult(file=str(path), tier=tier.value, ok=False, diagnostics=[d], resources=[], raw_log="",
                           command=[], seconds=0.0)

    def _diagnosis(self, key: str | None, log: str, path: Path, source: str,
                   ptx: Path | None) -> tuple[list[Diagnostic], list[KernelResources]]:
        """The log's diagnosis: the one stored with the cached log when the same code made it, else made (and
        stored) now. Everything it reads is in the key (text, headers, flags, toolchain) or in `made_by`."""
        made_by = f"{diagnosis_code()}|{self._demangler}"
        stored = self.cache.diagnosis(key, made_by) if key else None
        if stored is not None:
            return stored
        diagnostics, resources = self._diagnose(log, path, source, ptx)
        if key:
            try:
                self.cache.put_diagnosis(key, made_by, diagnostics, resources)
            except OSError:
                pass  # not stored: the next hit condenses the log again
        return diagnostics, resources

    def _diagnose(self, log: str, path: Path, source: str, ptx: Path | None) -> tuple[list[Diagnostic], list[KernelResources]]:
        lines = checked_lines(source) if path.suffix == ".py" else source.splitlines()
        return diagnose(log, path, source, lines, ptx, arch=self.toolchain.arch, demangler=self._demangler,
                        is_user=self._is_user, is_quiet=self._is_quiet)

    def _is_library(self, folder: str) -> bool:
        return (os.path.realpath(folder) + os.sep).startswith((*self._system, *self._library))

    def _is_quiet(self, file: str) -> bool:
        return os.path.realpath(file).startswith(self._quiet)

    def _is_user(self, file: str) -> bool:
        return not os.path.realpath(file).startswith((*self._system, *self._library))

    # -- processes ------------------------------------------------------------------------------

    def _start_job(self, key: str, tier: Tier) -> _Job:
        job = _Job(tier)
        with self._lock:
            old = self._jobs.get(key)
            self._jobs[key] = job
        if old:
            _cancel(old)
        return job

    def _end_job(self, key: str, job: _Job) -> None:
        with self._lock:
            if self._jobs.get(key) is job:
                del self._jobs[key]

    def _run(self, command: list[str], job: _Job, timeout: float) -> _Step:
        if self.jail is not None:
            command = self.jail.compile_command(command)
        with job.lock:
            if job.cancelled:
                return _Step(-1, "")
            # A session of its own, so a cancel kills nvcc's children (cicc, ptxas) too.
            job.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        try:
            out, _ = job.proc.communicate(timeout=timeout)
            return _Step(job.proc.returncode, out.decode(errors="replace"))
        except subprocess.TimeoutExpired:
            _kill(job.proc)
            out, _ = job.proc.communicate()
            return _Step(-1, out.decode(errors="replace"), timed_out=True)


def _source_copy(entry: Path, name: str, text: str) -> tuple[Path, bool]:
    """The text nvcc compiles, in its cache entry; where `.cutegen/` cannot take it (a full disk, read-only), in a
    private folder instead, and nothing is cached (returns the copy and whether it is in the cache)."""
    try:
        entry.mkdir(parents=True, exist_ok=True)
        return write_atomic(entry / name, text), True
    except OSError:
        return write_atomic(Path(tempfile.mkdtemp(prefix="cutegen-build-")) / name, text), False


def _cancel(job: _Job) -> None:
    with job.lock:
        job.cancelled = True
        if job.proc is not None and job.proc.poll() is None:
            _kill(job.proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _isystem_dirs(flags: list[str]) -> list[str]:
    """Directories the user marked as system headers (`-isystem DIR` or `-isystemDIR`)."""
    out = []
    for i, f in enumerate(flags):
        if f == "-isystem" and i + 1 < len(flags):
            out.append(flags[i + 1])
        elif f.startswith("-isystem") and len(f) > len("-isystem"):
            out.append(f[len("-isystem"):])
    return out
