"""The type tier: errors while typing, from clang's front end on the unsaved text, in a second or a few.

Decision (issue 29, measured side by side on this repository's kernels: bench/type_tier.py;
docs/reference/diagnostics.md, "Build tiers"): libclang from the `libclang-ng` wheel, not NVRTC. NVRTC is nvcc's
own EDG front end, but it compiles device code only: host functions are refused outright ("not allowed in JIT
mode") unless `-default-device` makes them device functions, which hides every wrong-side call (a host function called
from a kernel), cannot parse <torch/extension.h> or CUTLASS's host-side adapters (the Hopper GEMM gets
false errors: `std::is_pointer_v`, `make_kernel_hardware_info`), and its front end alone took longer than
clang's with a PCH. Clang in `--cuda-device-only` mode parses host and device code, instantiates every
template (unlike clangd, which skips header function bodies), and reports wrong-side calls as nvcc does,
except that it treats constexpr functions as __host__ __device__ (nvcc needs --expt-relaxed-constexpr for
that): a constexpr host function called from device code is nvcc's to report.

What clang needs for CUDA 13 (`typecheck/shims/`): an empty `curand_mtgp32_kernel.h` (clang's CUDA wrapper
includes it; CUDA 13 dropped it), a prelude declaring `cudaConfigureCall` (clang's `<<<>>>` needs it; CUDA
13 dropped it) and the cache-hint stores clang's headers lack, the toolkit's `include/cccl`,
`__CUDACC_VER_MAJOR__/MINOR__` (else CUTLASS switches its sm90 code off) and
`_CG_CLUSTER_INTRINSICS_AVAILABLE`. The tier reports errors only (`-w`): clang's warnings are not nvcc's.

The header set a file starts with (its leading `#include` lines) is parsed once into a precompiled header
under `.cutegen/typecheck/`, keyed like the build cache (toolchain, clang version, flags, the include lines,
the user headers' contents) and shared by every file that starts with the same includes. Each parse runs in
a child process (`clang_parse.py`) that a newer parse of the same file kills. A file whose parse is slow because
it instantiates header templates (a GEMM calling its header's entry point) gets a warm header set too: the PCH
with those instantiations done (warm.py), built in the background after its first slow clean parse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from cutegen.files import resolved
from cutegen.typecheck.parsers import Parsers
from cutegen.typecheck.warm import WARM_AFTER_S, WarmSets
from cutegen.compile.cache import BuildCache, cache_key
from cutegen.compile.includes import user_headers
from cutegen.diagnostics import condense
from cutegen.diagnostics.assemble import SourceLines
from cutegen.diagnostics.clang_log import raw_log, to_raw_messages
from cutegen.model import CheckResult, Diagnostic, Severity
from cutegen.settings import Settings
from cutegen.state import StateDir
from cutegen.compile.configuration import FileFlags
from cutegen.toolchain import ABI_INCLUDE, TORCH_NVCC_FLAGS, Toolchain, includes_torch, torch_include_dirs

TIER = "type"
SOURCE = "cutegen (typing)"  # how editors label these diagnostics: not yet nvcc's word
SHIMS = Path(__file__).parent / "shims"
PRELUDE = SHIMS / "cutegen_clang_prelude.h"
# Instantiate the templates the header set itself uses while building its PCH, once, instead of in every parse of
# every file that reads it (measured here, interleaved, 3 pairs each on 2 loaded cores: a parse of softsign 0.90-0.94x,
# of the Level-1 fp32 GEMM 0.68-0.94x the time with a plain PCH; the PCH build itself 0.84-1.25x).
PCH_ONLY_FLAGS = ["-Xclang", "-fpch-instantiate-templates"]
KEEP_PCH = 8  # precompiled header sets kept per state dir (a CuTe one is ~45 MB, a torch one more)
KEEP_RESULTS = 2000  # parse results kept (a few KB each): the newest, pruned a tenth at a time

# The leading lines a PCH may cover: blank lines, comments, #include and #pragma once.
_INCLUDE = re.compile(r'^\s*#\s*include\s*(?P<name><[^>]+>|"[^"]+")\s*(?://.*|/\*.*\*/\s*)?$')
_GUARDED = re.compile(r"^\s*#\s*(?:pragma\s+once|ifndef\s+\w+\s*\n\s*#\s*define)", re.M)
# Flags that mean the same to clang as to nvcc; other nvcc flags (-Xptxas, -lineinfo, ...) do not concern a parse.
_PASSED = re.compile(r"^(?:-[DUI].+|-std=.+|-isystem.*)$")


class TypeTierUnavailable(RuntimeError):
    """libclang is not installed or does not start; the message says how to get it."""


@dataclass
class _Job:
    proc: subprocess.Popen | None = None
    cancelled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class TypeChecker:
    def __init__(self, toolchain: Toolchain, settings: Settings, state_dir: Path, *,
                 warm_after_s: float | None = WARM_AFTER_S, others_busy: Callable[[], bool] = lambda: False,
                 file_flags: Callable[[Path], FileFlags] | None = None):
        """`warm_after_s`: a clean parse slower than this gets a warm header set (warm.py); None: never.
        `others_busy`: whether another tier compiles (the save tier's nvcc): warm builds wait for it too.
        `file_flags`: each file's build configuration (Builder.file_flags: settings, its compile_commands.json,
        defaults), so that clang sees the include folders, macros and CUTLASS nvcc does; None: the settings'."""
        self.file_flags = file_flags
        self.toolchain = toolchain
        self.settings = settings
        self.state = StateDir(state_dir)
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._running: dict[int, _Job] = {}  # every job with a parser process (header set builds too): for close()
        self._closed = False
        self._pch_locks: dict[str, threading.Lock] = {}
        self._failed_pch: set[str] = set()  # header sets with errors of their own: parsed with the file instead
        # What clang said of a text, keyed like the build cache (the text, its user headers, the flags, the
        # toolchain and clang): an undo, a reopened file or a repeated test run parses nothing again.
        self._results = BuildCache(self.state.type_results, problem=_answer_problem)
        self.parsers = Parsers()  # one parser process started ahead of the next edit
        self.warm_after_s = warm_after_s
        self.warm = WarmSets(self.state.type_cache, lambda request: self._child(request, _Job()),
                             lambda folder, keep: _prune(folder, keep, warm=True),
                             busy=lambda: bool(self._jobs) or others_busy())
        self._system = tuple(os.path.realpath(s) + os.sep for s in (
            toolchain.cutlass_include, str(ABI_INCLUDE), toolchain.cuda_root, str(SHIMS), "/usr/include",
            "/usr/lib", "/usr/local/include", *torch_include_dirs(), _clang_root()))

    def run(self, path: str | Path, text: str | None = None, *, job: str | None = None,
            on_first: Callable[[CheckResult], None] | None = None) -> CheckResult:
        """Parse `path` (or its unsaved `text`); a newer run with the same `job` kills this one's parser.
        `on_first`: called, before the full parse, with a first pass's result where one is quick (a file with a warm
        header set: its errors but those of CUDA's deferred checks, in a tenth of the time: clang_parse.py)."""
        path = resolved(path)
        source = text if text is not None else path.read_text(errors="replace")
        args = self.arguments(path, source)
        started = time.perf_counter()
        cached_key = self._result_key(path, source, args)
        key, handle = job or str(path), _Job()
        self._register(key, handle)  # from here on, a newer run or a cancel stops this one (a cached one too)
        try:
            answer = self._results.get(cached_key)
            if answer is not None:
                answer = {**answer, "pch": "cached result"}
            else:
                first = None if on_first is None else (
                    lambda early: on_first(self._answered(path, source, args, early, time.perf_counter() - started)))
                answer = self._parse(path, source, args, handle, first)
                if not handle.cancelled and "failure" not in answer and "diagnostics" in answer:
                    self._results.put(cached_key, answer)
                    _prune_results(self.state.type_results, KEEP_RESULTS)
        finally:
            with self._lock:
                if self._jobs.get(key) is handle:
                    del self._jobs[key]
        if handle.cancelled:
            return _result(path, [], "", args, time.perf_counter() - started, cancelled=True)
        return self._answered(path, source, args, answer, time.perf_counter() - started)

    def _answered(self, path: Path, source: str, args: list[str], answer: dict, seconds: float) -> CheckResult:
        """The parser's answer as the tier's result."""
        if "failure" in answer:  # not a fact about the code: a warning, never an error the user must fix
            message = (f"the type tier could not parse this file: {answer['failure']} "
                       "(the nvcc check on save still runs)")
            return _result(path, [_file_level(path, message)], answer["failure"], args, seconds)
        diagnostics = self._diagnose(answer["diagnostics"], path, source)
        return _result(path, diagnostics, raw_log(answer["diagnostics"]), args, seconds, pch=answer.get("pch", ""))

    def _parse(self, path: Path, source: str, args: list[str], handle: _Job,
               on_first: Callable[[dict], None] | None = None) -> dict:
        pch, built = self._ready_pch(self._pch(path, source, args))
        request = {"file": str(path), "text": source, "args": args, "collect_after": self.warm_after_s}
        after = self.warm_after_s
        warm = self.warm.for_parse(str(path), pch) if after is not None else None
        if warm is not None and pch is not None and after is not None:
            if on_first is not None:
                first = self._child({**request, "pch": warm, "first_pass": True, "collect_after": None}, handle)
                if not handle.cancelled and "failure" not in first and not _warm_involved(first, warm["path"]):
                    on_first({**first, "pch": "warm, first pass"})
            # A warm parse lists its uses again only when it is slow all the same: the file instantiates
            # something new (under load a warm GEMM parse alone can take a few seconds).
            answer = self._child({**request, "pch": warm, "collect_after": 4 * after}, handle)
            if "seconds" in answer and not handle.cancelled:
                self.warm.judge(str(path), answer["seconds"])  # a set that does not pay is not used again
            if answer.get("uses") and not handle.cancelled:
                self.warm.offer(str(path), pch, answer["uses"], answer["seconds"])
            if not _warm_involved(answer, warm["path"]):
                return {**answer, "pch": "warm"} if answer.get("pch") == "used" else answer
            # An error that points at the warm instantiations is the plain header set's to confirm (warm.py).
        answer = self._child({**request, "pch": pch}, handle)
        if warm is not None and not handle.cancelled and "failure" not in answer and not _has_errors(answer):
            self.warm.drop(str(path))  # the warm set erred where the plain one did not
        if built and answer.get("pch") == "used":
            answer["pch"] = "built"  # by this run, in a process of its own
        if pch is not None and answer.get("uses") and not handle.cancelled:
            self.warm.offer(str(path), pch, answer["uses"], answer["seconds"])
        return answer

    def _result_key(self, path: Path, source: str, args: list[str]) -> str:
        headers = user_headers(source, path.parent, self._include_dirs(path, user_only=True))
        return cache_key(tier="type-result", fingerprint=self.toolchain.fingerprint + clang_version(),
                         command_flags=[str(path), *args], text=source,
                         headers=[*headers, ABI_INCLUDE / "cutegen" / "abi.h", PRELUDE])

    def cancel(self, job: str) -> None:
        with self._lock:
            handle = self._jobs.get(job)
        if handle is not None:
            _stop(handle)

    def close(self) -> None:
        """Stop every parser process, a header set's build too, and start none again: a server that shuts down
        does not wait for a PCH build (seconds) that nobody will use."""
        with self._lock:
            self._closed = True
            running = list(self._running.values())
        for job in running:
            _stop(job)
        self.parsers.close()

    # -- what clang is told ------------------------------------------------------------------------

    def arguments(self, path: Path, source: str) -> list[str]:
        tc, s = self.toolchain, self.settings
        major, minor = (tc.nvcc_version.split(".") + ["0", "0"])[:2]
        args = ["-x", "cuda", "--cuda-device-only", f"--cuda-gpu-arch={tc.arch}", f"--cuda-path={tc.cuda_root}",
                "-nocudalib", "-w", f"-D__CUDACC_VER_MAJOR__={major}", f"-D__CUDACC_VER_MINOR__={minor}",
                "-D_CG_CLUSTER_INTRINSICS_AVAILABLE"]
        if self.file_flags is not None:  # the same standard, include folders (the project's CUTLASS) and macros
            configured = self.file_flags(path)
            args += configured.common()
            self._system = tuple(dict.fromkeys((*self._system, *(os.path.realpath(d) + os.sep
                                                                 for d in configured.library_dirs()))))
        else:
            args += ["-std=c++17", f"-I{tc.cutlass_include}", f"-I{ABI_INCLUDE}", f"-I{path.parent}",
                     *(f"-I{d}" for d in s.include_dirs)]
        flags = list(s.extra_flags)
        if includes_torch(source):  # as torch.utils.cpp_extension compiles it (the check tier does the same)
            args += [f for d in torch_include_dirs() for f in ("-isystem", d)]
            flags += TORCH_NVCC_FLAGS
        args += ["-isystem", os.path.join(tc.cuda_root, "include", "cccl"), "-isystem", str(SHIMS),
                 "-include", str(PRELUDE)]
        # Not -fno-cuda-host-device-constexpr (nvcc's rule without --expt-relaxed-constexpr): clang then refuses
        # constexpr host functions even in constant expressions and system headers (std::move in CUTLASS's
        # device_kernel, cute's `_c` literals), where nvcc allows them or only warns: false errors on the Hopper
        # GEMM, and it caught neither constexpr case of the corpus.
        return args + [f for f in flags if _PASSED.match(f)]

    def _include_dirs(self, path: Path, *, user_only: bool = False) -> list[Path]:
        """Where the file's quoted includes are found: its build configuration's folders (a compile_commands.json's
        -I: CUTLASS's examples include "cutlass/cutlass.h" through one), else the settings'. `user_only`: without the
        library folders (CUTLASS, -isystem), whose headers are keyed by the toolchain, not hashed one by one."""
        if self.file_flags is None:
            return [Path(d) for d in self.settings.include_dirs]
        flags = self.file_flags(path)
        library = {os.path.realpath(d) for d in flags.library_dirs()}
        return [Path(d) for kind, d in flags.includes
                if not user_only or (kind == "-I" and os.path.realpath(d) not in library)]

    def _pch(self, path: Path, source: str, args: list[str]) -> dict | None:
        """The precompiled header for the file's leading includes, or None when it starts with code."""
        lines = leading_includes(source, path.parent, self._include_dirs(path))
        if not lines:
            return None
        header = "\n".join(lines) + "\n"
        quoted = [Path(x) for x in re.findall(r'"([^"]+)"', header)]
        deps = quoted + user_headers(header, path.parent, self._include_dirs(path, user_only=True))
        # Without the file's own folder: files of every folder share the set (user headers are taken by their
        # absolute paths). Only a folder holding a header named like a library's would see another file.
        shared = [a for a in args if a != f"-I{path.parent}"] + PCH_ONLY_FLAGS
        key = cache_key(tier="type-pch", fingerprint=self.toolchain.fingerprint + clang_version(),
                        command_flags=shared, text=header, headers=[*deps, ABI_INCLUDE / "cutegen" / "abi.h", PRELUDE])
        target = self.state.type_cache / f"{key}.pch"
        if not target.is_file():
            _prune(self.state.type_cache, KEEP_PCH - 1)
        return {"path": str(target), "header": header, "args": shared}

    def _ready_pch(self, pch: dict | None) -> tuple[dict | None, bool]:
        """Build a missing PCH in a process of its own, one build per key at a time: a newer edit kills the
        parse, never the header set's build (else a user who types on would never get one). Returns the PCH to
        use (None: parse without one) and whether this call built it."""
        if pch is None or pch["path"] in self._failed_pch:
            return None, False
        with self._lock:
            lock = self._pch_locks.setdefault(pch["path"], threading.Lock())
        with lock:
            if Path(pch["path"]).is_file():
                return pch, False
            answer = self._child({"pch_only": True, "pch": pch}, _Job())
            if answer.get("pch") != "built":  # the headers themselves do not parse: their errors are the file's
                self._failed_pch.add(pch["path"])
                return None, False
        return pch, True

    # -- the parser process -----------------------------------------------------------------------

    def _register(self, key: str, job: _Job) -> None:
        with self._lock:
            old, self._jobs[key] = self._jobs.get(key), job
        if old is not None:
            _stop(old)

    def _child(self, request: dict, job: _Job) -> dict:
        with self._lock:
            if self._closed:
                return {}
            self._running[id(job)] = job
        with job.lock:
            if job.cancelled:
                with self._lock:
                    self._running.pop(id(job), None)
                return {}
            job.proc = self.parsers.take()
        try:
            out, err = job.proc.communicate(json.dumps(request).encode(), timeout=self.settings.check_timeout)
        except subprocess.TimeoutExpired:
            _kill(job.proc)
            job.proc.communicate()
            return {"failure": f"no answer within {self.settings.check_timeout:g} s (setting "
                               f"{self.settings.name_of('check_timeout')})"}
        finally:
            with self._lock:
                self._running.pop(id(job), None)
                closed = self._closed
            if not closed:
                self.parsers.refill()
        if job.cancelled:
            return {}
        try:
            return json.loads(out)
        except ValueError:
            tail = err.decode(errors="replace").strip().splitlines()[-3:]
            return {"failure": "the parser process died: " + (" ".join(tail) or f"exit {job.proc.returncode}")}

    def _diagnose(self, found: list[dict], path: Path, source: str) -> list[Diagnostic]:
        lines = SourceLines(path, source.splitlines())
        diagnostics = condense(to_raw_messages(found, lines), str(path), self._is_user, lines)
        for d in diagnostics:
            d.source = SOURCE
        return [d for d in diagnostics if d.severity is Severity.ERROR]

    def _is_user(self, file: str) -> bool:
        return not os.path.realpath(file).startswith(self._system)


def leading_includes(source: str, directory: Path, include_dirs: list[Path]) -> list[str]:
    """The file's first `#include` lines (comments and blank lines between them skipped), up to the first
    line of anything else. A user header (quoted) is taken by its absolute path, and only if it has an include
    guard: the file includes it again after the PCH did, which must be a no-op."""
    out: list[str] = []
    in_comment = False
    for line in source.splitlines():
        stripped = line.strip()
        if in_comment or stripped.startswith("/*"):
            in_comment = "*/" not in stripped
            if in_comment or stripped.endswith("*/"):
                continue
            break  # code after a comment on the same line
        if not stripped or stripped.startswith("//"):
            continue
        m = _INCLUDE.match(line)
        if not m:
            break
        name = m["name"]
        if name.startswith('"'):
            found = _guarded(name[1:-1], [directory, *include_dirs])
            if found is None:
                break
            name = f'"{found}"'
        out.append(f"#include {name}")
    return out


def _guarded(name: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        p = resolved(d / name)
        if p.is_file():
            try:
                head = p.read_text(errors="replace")[:4000]
            except OSError:
                return None
            return p if _GUARDED.search(head) else None
    return None


@lru_cache(maxsize=1)
def clang_version() -> str:
    """The installed libclang wheel's version, without loading the library (part of the PCH key)."""
    from importlib import metadata

    for name in ("libclang-ng", "libclang"):
        try:
            return f"{name}-{metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    raise TypeTierUnavailable("the type tier needs libclang: pip install libclang-ng (it is a dependency of cutegen)")


@lru_cache(maxsize=1)
def _clang_root() -> str:
    import importlib.util

    spec = importlib.util.find_spec("clang")
    return str(Path(spec.origin).parent) if spec and spec.origin else "/nonexistent-clang"


def _answer_problem(answer: object) -> str | None:
    """Why a stored clang answer cannot be used (another version's, a damaged file), or None: a miss, not an error."""
    if not isinstance(answer, dict):
        return f"a JSON {type(answer).__name__}, not an object"
    if "failure" in answer:
        return None if isinstance(answer["failure"], str) else "'failure' is not a string"
    diagnostics = answer.get("diagnostics")
    if not isinstance(diagnostics, list) or not all(isinstance(d, dict) for d in diagnostics):
        return "no list of diagnostics"
    return None if isinstance(answer.get("seconds", 0.0), (int, float)) else "'seconds' is not a number"


def _prune_results(folder: Path, keep: int) -> None:
    """Past `keep` entries, drop the oldest tenth (so pruning is rare: one listing per keep/10 parses)."""
    try:
        entries = [e for d in folder.iterdir() if d.is_dir() for e in d.iterdir()]
    except OSError:
        return
    if len(entries) <= keep:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for old in entries[:len(entries) - keep + keep // 10]:
        shutil.rmtree(old, ignore_errors=True)


def _has_errors(answer: dict) -> bool:
    return any(d.get("severity") in ("error", "fatal") for d in answer.get("diagnostics", []))


def _warm_involved(answer: dict, warm_pch: str) -> bool:
    """An error whose chain passes through the warm header (an instantiation it made first: "explicit
    specialization after instantiation", "implicit instantiation first required here"). Any other error is the
    file's own, the same with or without the warm set: reported at once, not after a plain parse."""
    header = str(Path(warm_pch).with_suffix(".cuh"))

    def touches(d: dict) -> bool:
        return d.get("file") == header or "__cutegen_warm" in d.get("text", "") or any(
            touches(c) for c in d.get("children", []))

    return any(touches(d) for d in answer.get("diagnostics", []) if d.get("severity") in ("error", "fatal"))


def _prune(folder: Path, keep: int, *, warm: bool = False) -> None:
    """Keep the `keep` most recently used plain (or warm) PCH files (a file reads its PCH on every parse)."""
    try:
        pchs = sorted((p for p in folder.glob("*.pch") if p.name.endswith(".warm.pch") == warm),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in pchs[keep:]:
        for p in (old, old.with_suffix(".cuh")):
            p.unlink(missing_ok=True)


def _stop(job: _Job) -> None:
    with job.lock:
        job.cancelled = True
        if job.proc is not None:
            _kill(job.proc)


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


FAILED = "type-tier-failed"  # the parse did not finish (timeout, libclang refusing): said once, as a warning


def _file_level(path: Path, message: str) -> Diagnostic:
    return Diagnostic(file=str(path), line=1, col=1, end_col=2, severity=Severity.WARNING, message=message,
                      code=FAILED, source=SOURCE, root=message)


def _result(path: Path, diagnostics: list[Diagnostic], log: str, args: list[str], seconds: float, *,
            cancelled: bool = False, pch: str = "") -> CheckResult:
    ok = not cancelled and not any(d.severity is Severity.ERROR or d.code == FAILED for d in diagnostics)
    command = ["libclang", *args, str(path)] + ([f"(pch: {pch})"] if pch else [])
    return CheckResult(file=str(path), tier=TIER, ok=ok, diagnostics=diagnostics, resources=[], raw_log=log,
                       command=command, seconds=seconds, cancelled=cancelled)
