"""Diagnostics: check a file on open and save with nvcc (the save tier), publish the condensed result tagged
with the document version; with checkOnType, the type tier (`typing_tier.py`) reports errors while typing.

One job per file (`jobs.py`): a newer request cancels the older one, both its task and its nvcc process. A
result for a version the editor has moved past is dropped, never published.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import TYPE_CHECKING, Callable

from lsprotocol import types

from cutegen.lsp import convert
from cutegen.lsp.documents import is_checked, path_of
from cutegen.lsp.jobs import Job, JobTable
from cutegen.lsp.typing_tier import TypingTier
from cutegen.model import CheckResult
from cutegen.toolchain import ToolchainError

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer


class Checker:
    def __init__(self, server: CuteGenServer) -> None:
        self.server = server
        self.jobs = JobTable()
        self._ids = itertools.count()
        # nvcc is CPU-bound: with more files checking than cores, each check would only take longer.
        self._slots = asyncio.Semaphore(max(1, (os.cpu_count() or 2) // 2))
        # Called with (job, result) after a result is published (never for stale ones): the agent's
        # background fixes and auto-test hang here.
        self.listeners: list[Callable[[Job, CheckResult], None]] = []
        self.typing = TypingTier(server, self)
        self._configured: dict[str, str] = {}  # file → the build configuration last logged for it

    def schedule(self, uri: str, *, delay: float = 0.0, record: bool = True,
                 on_stage: Callable[[str], None] | None = None) -> asyncio.Task | None:
        """Start checking `uri` (after `delay` seconds), replacing its running job; None if not a .cu file."""
        path = path_of(uri)
        if path is None or not is_checked(path):
            return None
        doc = self.server.open_document(uri)
        self.cancel(uri)
        job = Job(uri, path, doc.version if doc else None, f"lsp:{path}:{next(self._ids)}", saved=record)
        job.text = text = doc.source if doc else None
        job.task = asyncio.create_task(self._run(job, text, delay, record, on_stage))
        self.jobs.start(job)
        return job.task

    def cancel(self, uri: str) -> None:
        self.jobs.cancel(uri)

    def cancel_all(self) -> None:
        self.jobs.cancel_all()
        self.typing.cancel_all()

    async def _run(self, job: Job, text: str | None, delay: float, record: bool, on_stage) -> CheckResult | None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.server.settings_loaded()
            async with self._slots:
                result = await asyncio.to_thread(self._check, job, text, record, on_stage)
            if result is not None and not result.cancelled:
                self.publish(job, result)
                if job.unsaved and self.server.session.first_report(job.unsaved):
                    self.server.show(f"CuTeGen: the check record of {job.path.name} was not saved: {job.unsaved}",
                                     types.MessageType.Warning)
        except asyncio.CancelledError:
            job.kill()  # cancelled by a command or shutdown: the compiler must stop too
            raise
        except ToolchainError as e:
            self.server.toolchain_failed(str(e))
            return None
        except Exception:
            self.server.log_exception(f"checking {job.path.name} failed")
            return None
        finally:
            self.jobs.finished(job)
        return result

    def _check(self, job: Job, text: str | None, record: bool, on_stage) -> CheckResult | None:
        """Runs in a worker thread."""
        if job.stop.is_set():
            return None
        job.builder = builder = self.server.session.builder(job.path)

        def stage(name: str) -> None:
            if job.stop.is_set():  # killed between our check and the Builder registering the job
                builder.cancel(job.key)
            if on_stage:
                on_stage(name)

        checked = self.server.session.check(job.path, text, job=job.key, version=job.version, on_stage=stage,
                                            record=record)
        if checked.unsaved:  # the diagnostics are still right: publish them, and say this once
            job.unsaved = str(checked.unsaved)
        return checked.result

    def publish(self, job: Job, result: CheckResult) -> None:
        if result.command:  # a real compile, not a refusal: CodeLens shows its resources
            self.server.session.results[result.file] = result
        doc = self.server.open_document(job.uri)
        now = doc.version if doc else None
        if job.version is not None and now != job.version:  # edited or closed meanwhile
            self.server.log(f"{job.path.name}: result for version {job.version} dropped (now {now})")
            return
        groups = convert.by_uri(result, job.uri)
        for uri in self.server.published.replace(job.uri, groups):
            self.send(uri, job.version if uri == job.uri else None)
        if result.configuration and self._configured.get(result.file) != result.configuration:
            self._configured[result.file] = result.configuration  # said once, and again when it changes
            self.server.log(f"{job.path.name}: {result.configuration}")
        if result.command and job.path.suffix not in (".cuh", ".hpp"):  # the type tier parses .cu files only
            self.typing.saved_result(job, job.text, result)
        self.server.refresh_code_lens()
        for listener in self.listeners:
            try:
                listener(job, result)
            except Exception:
                self.server.log_exception(f"after checking {job.path.name}")

    def clear(self, uri: str) -> None:
        """The file was closed: withdraw what its checks published (its own and in headers)."""
        self.cancel(uri)
        self.typing.forget(uri)
        for affected in self.server.published.drop(uri):
            self.send(affected, None)

    def send(self, uri: str, version: int | None) -> None:
        # A header's own check and the checks of the files that include it find the same errors there: each once.
        unique = {(lsp.range.start.line, lsp.range.start.character, lsp.message): lsp
                  for lsp, _ in self.server.published.at(uri)}
        diagnostics = list(unique.values())
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))


def register(server: CuteGenServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: CuteGenServer, params: types.DidOpenTextDocumentParams):
        ls.checks.schedule(params.text_document.uri)
        await ls.settings_loaded()
        if ls.session.settings.check_on_type:  # the first errors before nvcc's, and the header set parsed early
            ls.checks.typing.schedule(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CuteGenServer, params: types.DidSaveTextDocumentParams):
        ls.loop.saved(params.text_document.uri)  # the background run of the older text stops at its next stage
        ls.checks.typing.cancel(params.text_document.uri)  # nvcc speaks for this text: the cores are its
        ls.checks.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: CuteGenServer, params: types.DidChangeTextDocumentParams):
        # A running check of the saved text goes on (its run record is still worth having); its
        # diagnostics are dropped as stale when it ends. With checkOnType the type tier parses the
        # unsaved text after the debounce. The first edits may come before the settings: wait for them.
        await ls.settings_loaded()
        settings = ls.session.settings
        if settings.check_on_type:
            ls.checks.typing.schedule(params.text_document.uri, delay=settings.debounce_ms / 1000)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CuteGenServer, params: types.DidCloseTextDocumentParams):
        ls.loop.closed(params.text_document.uri)
        ls.checks.clear(params.text_document.uri)
