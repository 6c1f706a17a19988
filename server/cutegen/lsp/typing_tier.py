"""The type tier in the editor: errors while typing (clang on the unsaved text, `typecheck/checker.py`), under the
save tier's nvcc result, which stays the truth.

- didChange (with `checkOnType`, on by default) → debounce (none for the first edit after a pause) → a parse of
  the text; a newer edit kills the older parse. Its diagnostics are labelled `cutegen (typing)` and carry along
  what only nvcc can say (ptxas, resources, the silent-bug checks, warnings) from the last saved check, on the
  lines whose text is unchanged. A file with a warm header set gets a first pass published before its full parse
  (all but CUDA's deferred checks, ~0.1 s on a GEMM), which the full parse's result then replaces.
- A save-tier result replaces them (same owner in the store); a typing result never replaces a save-tier result
  of the same or a newer version.
- Where the two disagree on the same text (one reports errors, the other none), nvcc wins: the typing tier stays
  quiet for that file until the lines they disagreed on are edited ("changes materially": the disagreement can
  no longer be the same one).
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import hashlib
import itertools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cutegen.typecheck import FAILED, TypeTierUnavailable
from cutegen.lsp import convert
from cutegen.lsp.documents import is_checked, path_of, unfit
from cutegen.lsp.jobs import Job, JobTable
from cutegen.model import CheckResult, Diagnostic, Severity
from cutegen.toolchain import ToolchainError

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

_NOT_FRONT_END = ("ptxas", "timeout", "nvcc-failed")  # errors a front end cannot agree or disagree with


@dataclass
class Saved:
    """The last save-tier (nvcc) result published for a file, with the text it checked."""

    version: int | None
    digest: str
    lines: list[str]
    result: CheckResult


@dataclass
class Quiet:
    """The typing tier is silent for a file while these source lines (by text) are all still there."""

    lines: frozenset[str]
    reason: str

    def holds(self, text: str) -> bool:
        current = {line.strip() for line in text.splitlines()}
        return self.lines <= current


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def front_end_errors(result: CheckResult) -> list[Diagnostic]:
    return [d for d in result.errors if d.file == result.file and not d.code.startswith(_NOT_FRONT_END)]


def disagreement(typed: CheckResult, saved: Saved) -> Quiet | None:
    """When one tier reports errors and the other none on the same text: the lines to watch, else None."""
    fast, truth = front_end_errors(typed), front_end_errors(saved.result)
    if bool(fast) == bool(truth):
        return None
    wrong = fast or truth
    lines = frozenset(saved.lines[d.line - 1].strip() for d in wrong if 0 < d.line <= len(saved.lines))
    first = wrong[0]
    if fast:
        reason = f"nvcc reports no error where the typing tier said line {first.line}: {first.message}"
    else:
        reason = f"the typing tier missed nvcc's error at line {first.line}: {first.message}"
    return Quiet(lines or frozenset({""}), reason)


def carried(saved: Saved, text: str) -> list[Diagnostic]:
    """The saved check's diagnostics no front end gives (ptxas, resources, silent-bug checks, warnings), moved
    to where their lines are now; those whose line was edited are dropped (the next save says them again)."""
    keep = [d for d in saved.result.diagnostics if d.severity is not Severity.ERROR or d.code.startswith("ptxas")]
    if not keep:
        return []
    now = text.splitlines()
    moved = _line_map(saved.lines, now)
    out = []
    for d in keep:
        if d.file != saved.result.file:
            out.append(d)  # a header's: typing in the .cu leaves it where it is
        elif d.line in moved:
            out.append(dataclasses.replace(d, line=moved[d.line]))
    return out


def _line_map(old: list[str], new: list[str]) -> dict[int, int]:
    """1-based old line → new line, for lines inside unchanged stretches."""
    out = {}
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            out[block.a + k + 1] = block.b + k + 1
    return out


class TypingTier:
    def __init__(self, server: CuteGenServer, checker) -> None:
        self.server = server
        self.checker = checker  # the save tier's Checker: its send()
        self.jobs = JobTable()
        self.saved: dict[str, Saved] = {}
        self.typed: dict[str, tuple[str, CheckResult]] = {}  # uri → (digest of the text, its result)
        self.quiet: dict[str, Quiet] = {}
        self._ids = itertools.count()
        self._changed: dict[str, float] = {}  # uri → when its last edit (or open) came
        self._slot = asyncio.Semaphore(1)  # one parse at a time: they are CPU-bound, and nvcc needs the rest

    def schedule(self, uri: str, delay: float) -> asyncio.Task | None:
        path, doc = path_of(uri), self.server.open_document(uri)
        if path is None or not is_checked(path) or path.suffix != ".cu" or doc is None:
            return None  # ModelNew .py files: their CUDA is in Python strings, the save tier checks them
        self.cancel(uri)
        # Leading edge: the first edit after a pause (a paste, a one-key fix) is parsed at once; within a burst
        # each keystroke waits the debounce (and kills the parse the burst's first one started).
        now = time.monotonic()
        last, self._changed[uri] = self._changed.get(uri), now
        if last is None or now - last >= delay:
            delay = 0.0
        job = Job(uri, path, doc.version, f"type:{path}:{next(self._ids)}", saved=False)
        job.task = asyncio.create_task(self._run(job, doc.source, delay))
        self.jobs.start(job)
        return job.task

    def cancel(self, uri: str) -> None:
        self.jobs.cancel(uri)

    def cancel_all(self) -> None:
        self.jobs.cancel_all()

    def forget(self, uri: str) -> None:
        self.cancel(uri)
        for table in (self.saved, self.typed, self.quiet, self._changed):
            table.pop(uri, None)

    async def _run(self, job: Job, text: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.server.settings_loaded()
            loop = asyncio.get_running_loop()

            def first(early: CheckResult) -> None:  # from the parse's thread: published on the loop, as any result
                loop.call_soon_threadsafe(self._publish_first, job, text, early)

            queued = loop.time()
            async with self._slot:
                waited = loop.time() - queued
                result = await asyncio.to_thread(self._parse, job, text, first)
            if result is not None and not result.cancelled:  # the trace of one edit (bench/typing_probe.py)
                pch = result.command[-1] if result.command else ""
                self.server.log(f"{job.path.name}: typing parse of version {job.version}: {result.seconds:.2f} s "
                                f"{pch}, {waited:.2f} s waiting for the slot")
            if result is not None and any(d.code == FAILED for d in result.diagnostics):
                self.server.log(f"{job.path.name}: {result.diagnostics[0].message}")  # nvcc's result stays
            elif result is not None and not result.cancelled:
                self.publish(job, text, result)
        except asyncio.CancelledError:
            job.kill()
            raise
        except (ToolchainError, TypeTierUnavailable) as e:
            self.server.toolchain_failed(str(e))
        except Exception:
            self.server.log_exception(f"typing check of {job.path.name} failed")
        finally:
            self.jobs.finished(job)

    def _parse(self, job: Job, text: str, on_first) -> CheckResult | None:
        """Runs in a worker thread."""
        if job.stop.is_set() or unfit(job.path, text):
            return None
        job.builder = checker = self.server.session.type_checker(job.path)  # Job.kill cancels through it
        if job.stop.is_set():
            return None
        return checker.run(job.path, text, job=job.key, on_first=on_first)

    def _publish_first(self, job: Job, text: str, result: CheckResult) -> None:
        """A first pass (typecheck/checker.py): shown at once, replaced by the full parse's result moments later.
        It takes no part in comparing the tiers: it lacks CUDA's deferred checks by design."""
        if job.stop.is_set() or any(d.code == FAILED for d in result.diagnostics):
            return
        self.server.log(f"{job.path.name}: typing first pass for version {job.version} ({result.seconds:.2f} s)")
        self.publish(job, text, result, first=True)

    def publish(self, job: Job, text: str, result: CheckResult, *, first: bool = False) -> None:
        doc = self.server.open_document(job.uri)
        if doc is None or doc.version != job.version:
            return  # edited or closed meanwhile: a newer parse is coming
        if not first:
            self.typed[job.uri] = (digest(text), result)
            self._compare(job)  # also when late: a disagreement on the saved text still counts
        saved = self.saved.get(job.uri)
        if saved is not None and saved.version is not None and job.version is not None and saved.version >= job.version:
            return  # nvcc already spoke for this text
        quiet = self.quiet.get(job.uri)
        if quiet is not None:
            if quiet.holds(text):
                self.server.log(f"{job.path.name}: typing result for version {job.version} withheld ({quiet.reason})")
                return
            del self.quiet[job.uri]
            self.server.log(f"{job.path.name}: the lines the two tiers disagreed on changed; typing diagnostics resume")
        shown = dataclasses.replace(result, diagnostics=result.diagnostics + (carried(saved, text) if saved else []))
        for uri in self.server.published.replace(job.uri, convert.by_uri(shown, job.uri)):
            self.checker.send(uri, job.version if uri == job.uri else None)

    def saved_result(self, job: Job, text: str | None, result: CheckResult) -> None:
        """The save tier published `result` for `text` (None: the text on disk)."""
        if text is None:
            doc = self.server.open_document(job.uri)
            text = doc.source if doc is not None and doc.version == job.version else None
        if text is None:
            return
        self.saved[job.uri] = Saved(job.version, digest(text), text.splitlines(), result)
        self._compare(job)

    def _compare(self, job: Job) -> None:
        uri = job.uri
        saved, typed = self.saved.get(uri), self.typed.get(uri)
        if saved is None or typed is None or typed[0] != saved.digest:
            return
        quiet = disagreement(typed[1], saved)
        if quiet is not None:
            self.quiet[uri] = quiet
            self.server.log(f"{job.path.name}: nvcc wins; the typing tier stays quiet for this file until the "
                            f"lines concerned change ({quiet.reason})")
