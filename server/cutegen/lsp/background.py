"""The background loop in the editor: after a save that compiles cleanly, the engine's stages
(cutegen/background.py: test → time → profile) run for the file, without a command.

- One GPU job at a time, newest save first: there is one card and one warm worker, and a kernel timed beside
  another would be measured on a shared card. A file's newer save stops its older run at the next stage
  boundary, killing its build and a running ncu at once (background.Run.stop).
- Shown where the user looks: a work-done progress per run (cancellable: Cancel stops it now, the GPU
  worker too), CodeLens and hover figures with "running…" and "stale" (made from another text than the
  editor's) marks, a failed verdict as a diagnostic, and the LOOP notification the VS Code extension's
  status bar follows. A regression says so in all of them, with Restore Best one click away.
- Without a GPU it is off, said once per session (background.NO_GPU).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen import background, records
from cutegen.background import Event, LoopResult, Regression, Run, Stage
from cutegen.lsp import convert, runs
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import path_of
from cutegen.lsp.progress import Work
from cutegen.records import RunRecord
from cutegen.toolchain import ToolchainError, local_gpu_arch

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

LOOP_NOTIFICATION = "cutegen/loop"  # server → client: a run's state (vscode-client/src/core/loop.ts reads it)
# Its `state`s: a stage running or done; the run ended (idle), stopped by a newer save, cancelled by the user;
# off (no GPU, said once). tests/lsp/test_contracts.py ties them to the extension's list.
STATES = ("running", "done", "idle", "stopped", "cancelled", "off")
FAILURE_OWNER = "#loop"  # the Published store's owner suffix for a failed verdict's diagnostic
# The figures the loop shows, the command each CodeLens line runs, and the stage that makes them.
FIGURES = (("test", Command.TEST, Stage.TEST), ("bench", Command.TEST, Stage.TIME),
           ("profile", Command.PROFILE, Stage.PROFILE))


@dataclass
class Waiting:
    """A clean save waiting for the GPU."""

    uri: str
    path: Path
    saved: float  # time.monotonic() of its didSave: newest first, and the "save → figure" times
    digest: str | None = None  # of the text its run tests (background.Plan)


@dataclass
class Shown:
    """What the editor shows of one file besides its records."""

    running: Stage | None = None
    regression: Regression | None = None
    regression_of: tuple | None = None  # the latest test and bench records the regression was read from


class Loop:
    def __init__(self, server: CuteGenServer) -> None:
        self.server = server
        self.waiting: dict[str, Waiting] = {}
        self.shown: dict[str, Shown] = {}
        self.active: tuple[Waiting, Run] | None = None
        self.saves: dict[str, float] = {}
        self.failures: dict[str, str] = {}  # uri → digest of the text whose failed verdict is published
        self._work: Work | None = None
        self._drain: asyncio.Task | None = None
        self._gpu: bool | None = None
        self._said_no_gpu = False

    # -- what starts and stops runs ----------------------------------------------------------

    def saved(self, uri: str) -> None:
        """didSave: a run of another text of this file is stale from now on; its check queues the new one."""
        self.saves[uri] = time.monotonic()
        self.waiting.pop(uri, None)
        digest = self._digest(uri, path_of(uri))
        if self.active and self.active[0].uri == uri and self.active[1].digest != digest:
            self.active[1].stop()
        if self.failures.get(uri) not in (None, digest):
            self._withdraw_failure(uri)

    def closed(self, uri: str) -> None:
        self._withdraw_failure(uri)

    def after_check(self, job, result) -> None:
        """Checker listener: a saved text that compiles cleanly waits for the GPU."""
        settings = self.server.session.settings
        if not (job.saved and result.ok and not result.cancelled) or not (settings.test_on_save or settings.auto_test):
            return
        self.waiting[job.uri] = Waiting(job.uri, job.path, self.saves.get(job.uri, time.monotonic()))
        if self._drain is None or self._drain.done():
            self._drain = asyncio.ensure_future(self._run_waiting())

    def shutdown(self) -> None:
        self.waiting.clear()
        if self.active:
            self.active[1].cancel()

    async def _run_waiting(self) -> None:
        while self.waiting:
            uri = max(self.waiting, key=lambda u: self.waiting[u].saved)
            await self._run(self.waiting.pop(uri))

    async def _run(self, w: Waiting) -> None:
        session = self.server.session
        try:
            if self._gpu is None:
                self._gpu = await asyncio.to_thread(lambda: local_gpu_arch() is not None)  # nvidia-smi, once
            planned = await asyncio.to_thread(background.plan, session, w.path, gpu=self._gpu)
        except Exception:
            self.server.log_exception(f"planning the background run of {w.path.name}")
            return
        if planned.why_not:
            self._say_once(planned.why_not, w)
        if not planned.stages or self.saves.get(w.uri, w.saved) > w.saved:
            return  # nothing to do, or saved again while it was planned: the newer save's check queues that
        w.digest = planned.digest
        loop = asyncio.get_running_loop()

        def on_event(e: Event) -> None:  # on the run's thread: handled on the event loop
            loop.call_soon_threadsafe(self._event, w, e)
        run = Run(session, w.path, planned, on_event)
        self.active, outcome = (w, run), None
        stages = " → ".join(s.value for s in planned.stages)
        try:
            async with Work(self.server, f"CuTeGen: {w.path.name}: {stages}", on_cancel=run.cancel) as work:
                self._work = work
                outcome = await asyncio.to_thread(run.execute)
                work.end_message = _end_message(outcome, work.cancelled)
        except ToolchainError as e:
            self.server.toolchain_failed(str(e))
        except Exception:
            self.server.log_exception(f"the background run of {w.path.name} failed")
        finally:
            self.active, self._work = None, None
            self._shown(w.uri).running = None
        if outcome is not None:
            self._finished(w, outcome, work.cancelled)

    # -- what a run shows as it goes ---------------------------------------------------------

    def _event(self, w: Waiting, e: Event) -> None:
        shown = self._shown(w.uri)
        if e.state == "running":
            if self._work is not None:
                self._work.report(f"{e.stage.value}: {e.step}" if e.step else e.stage.value)
            if shown.running is not e.stage:
                shown.running = e.stage
                self._notify(w, e.stage, "running", since=e.at - w.saved)
                self.server.refresh_code_lens()
            return
        shown.running = None
        record = e.record
        if record is not None:
            self._publish_failure(w, record)
        self._notify(w, e.stage, "done", summary=record.summary() if record else "",
                     level=record.level if record else "info", since=e.at - w.saved)
        self.server.refresh_code_lens()

    def _finished(self, w: Waiting, outcome: LoopResult, cancelled: bool) -> None:
        regression = outcome.regression
        if regression:
            self.server.log(f"{w.path.name}: {regression.message}", types.MessageType.Warning)
        state = "cancelled" if cancelled else "stopped" if outcome.cancelled else "idle"
        self._notify(w, None, state, regression=regression.message if regression else None,
                     level=regression.level if regression else "ok")
        self.server.refresh_code_lens()

    def _notify(self, w: Waiting, stage: Stage | None, state: str, *, summary: str = "", level: str = "info",
                regression: str | None = None, since: float | None = None) -> None:
        assert state in STATES, state
        doc = self.server.open_document(w.uri)
        self.server.protocol.notify(LOOP_NOTIFICATION, {
            "uri": w.uri, "file": w.path.name, "version": doc.version if doc else None,
            "stage": stage.value if stage else None, "state": state, "summary": summary, "level": level,
            "regression": regression, "sinceSave": round(since, 3) if since is not None else None,
            "digest": w.digest,  # the text the run is about
            "token": self._work.token if self._work else None})

    def _say_once(self, text: str, w: Waiting) -> None:
        if self._said_no_gpu:
            return
        self._said_no_gpu = True
        self.server.show(f"CuTeGen: {text} ({w.path.name} has a problem to test against; tests, timings and "
                         "profiles need an NVIDIA GPU)", types.MessageType.Info)
        self._notify(w, None, "off", summary=text)

    # -- a failed verdict as a diagnostic ------------------------------------------------------

    def _publish_failure(self, w: Waiting, typed: RunRecord) -> None:
        if typed.path is None or typed.kind not in ("test", "bench"):
            return
        text = self._text(w.uri, w.path)
        if text is None or typed.source_digest != records.text_digest(text):
            return  # the editor holds another text now: the line may not be the one
        d = background.failure_diagnostic(typed, text)
        if d is not None:
            self.server.published.replace(w.uri + FAILURE_OWNER, {w.uri: [(convert.to_lsp(d), d)]})
            self.failures[w.uri] = typed.source_digest
            self.server.checks.send(w.uri, None)

    def _withdraw_failure(self, uri: str) -> None:
        self.failures.pop(uri, None)
        for affected in self.server.published.drop(uri + FAILURE_OWNER):
            self.server.checks.send(affected, None)

    # -- figures for CodeLens and hover ---------------------------------------------------------

    def figures(self, uri: str, path: Path) -> list[tuple[str, str, RunRecord | None]]:
        """(kind, mark, latest record) per figure; mark "running", "stale" (made from another text than the
        editor's) or ""."""
        found = runs.latest(self.server.session.state_dir(path).path, str(path))
        text, running = self._text(uri, path), self._shown(uri).running
        out = []
        for kind, _, stage in FIGURES:
            record: RunRecord | None = found.get(kind)
            if running is stage:
                out.append((kind, "running", record))
            elif record is not None:
                stale = text is not None and record.source_digest not in (None, records.text_digest(text))
                out.append((kind, "stale" if stale else "", record))
        return out

    def code_lenses(self, uri: str, path: Path) -> list[tuple[str, str]]:
        """(title, command) of the figure lines, then the regression with Restore Best."""
        commands = {kind: command.value for kind, command, _ in FIGURES}
        out = []
        for kind, mark, record in self.figures(uri, path):
            title = f"{kind}: running…" if mark == "running" or record is None else \
                f"{kind}{' (stale)' if mark else ''}: {record.summary()}"
            out.append((title, commands[kind]))
        regression = self.regression(uri, path)
        if regression:
            out += [(f"⚠ {regression.message}", Command.RESTORE_BEST.value),
                    ("Restore Best", Command.RESTORE_BEST.value)]
        return out

    def hover_lines(self, uri: str, path: Path) -> dict[str, str]:
        """kind → its figure as the hover says it, marked; plus "regression" when there is one."""
        out = {}
        for kind, mark, record in self.figures(uri, path):
            if mark == "running" or record is None:  # figures() gives None only while running
                out[kind] = "running…" + (f" (last: {record.summary()})" if record else "")
            else:
                out[kind] = f"*stale* · {record.summary()}" if mark else record.summary()
        regression = self.regression(uri, path)
        if regression:
            out["regression"] = (f"**{regression.message}** (CuTeGen: Restore Best Version brings back the "
                                 "fastest measured version)")
        return out

    def regression(self, uri: str, path: Path) -> Regression | None:
        """Read again only when a newer test or bench was written (by the loop or a command)."""
        shown, state = self._shown(uri), self.server.session.state_dir(path)
        latest = tuple((r.path, r.time) if r else None for r in
                       (records.latest(state, str(path), "test"), records.latest(state, str(path), "bench")))
        if shown.regression_of != latest:
            shown.regression, shown.regression_of = background.regression(state, str(path)), latest
        return shown.regression

    # -- helpers ------------------------------------------------------------------------------

    def _shown(self, uri: str) -> Shown:
        return self.shown.setdefault(uri, Shown())

    def _text(self, uri: str, path: Path | None) -> str | None:
        doc = self.server.open_document(uri)
        if doc is not None:
            return doc.source
        try:
            return path.read_text() if path else None
        except OSError:
            return None

    def _digest(self, uri: str, path: Path | None) -> str | None:
        text = self._text(uri, path)
        return records.text_digest(text) if text is not None else None


def _end_message(outcome: LoopResult, cancelled: bool) -> str:
    if cancelled:
        return "cancelled"
    if outcome.cancelled:
        return "stopped: the file was saved again"
    last = list(outcome.records.values())[-1] if outcome.records else None
    return (last.summary() if last else "") or "done"


def register(server: CuteGenServer) -> None:
    server.checks.listeners.append(server.loop.after_check)
