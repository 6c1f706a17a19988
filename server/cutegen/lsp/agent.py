"""The agent in the editor: background verified fixes, the diagnose/fix/optimize/tune/generate commands,
and applying a stored verified patch (patches.py holds them and builds the edits).

A patch is applied only to the text it was verified against; if the document moved on, it is re-based onto
the new text and verified again, or refused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from cutegen.agent.consent import UsedEndpoints
from cutegen.files import write_atomic
from cutegen.lsp import convert
from cutegen.lsp.documents import path_of, uri_of
from cutegen.lsp.patches import PatchStore, create_file_edit, diagnostic_key, minimal_edits, replace_edit
from cutegen.lsp.progress import Work
from cutegen.model import Diagnostic, Severity

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

APPLY_WAIT_S = 5.0  # how long to wait for the client's didChange after it applied an edit


class AgentService:
    def __init__(self, server: CuteGenServer) -> None:
        self.server = server
        self.patches = PatchStore()
        self.tasks: dict[tuple[str, tuple], asyncio.Task] = {}
        self._slots: asyncio.Semaphore | None = None
        self.used_endpoints = UsedEndpoints()
        self._said_off: set[str] = set()  # endpoints the log has said the background fix is off for

    def slots(self) -> asyncio.Semaphore:
        if self._slots is None:  # one agent job at a time: it competes with checks for 2 cores and the GPU
            self._slots = asyncio.Semaphore(1)
        return self._slots

    # -- engine objects -------------------------------------------------------------------------

    def _agent(self, path: Path, on_stage=None):
        """Blocking (toolchain discovery): call in a thread."""
        session = self.server.session
        return session.agent(path, problem=session.settings.problem, on_stage=on_stage)

    def llm_configured(self) -> bool:
        from cutegen.agent.llm import configured

        return configured(self.server.session.settings) is None

    def _document(self, uri: str) -> tuple[Path | None, str | None, int | None]:
        path, doc = path_of(uri), self.server.open_document(uri)
        if doc is not None:
            return path, doc.source, doc.version
        if path is not None and path.is_file():
            return path, path.read_text(errors="replace"), None
        return path, None, None

    # -- background fixes ---------------------------------------------------------------------

    def after_publish(self, job, result) -> None:
        """Called after a check is published: start a background fix of the file's first error
        when an LLM is configured (its verified patch then appears as a quick fix)."""
        if result.cancelled or not self.llm_configured():
            return
        if not self._background_allowed():
            return
        uri = job.uri
        doc = self.server.open_document(uri)
        if job.version is not None and (doc is None or doc.version != job.version):
            return  # the result was dropped as stale: the editor has newer text
        errors = [d for d in result.errors if d.file == result.file and d.code != "timeout"]
        for key in [k for k in self.tasks if k[0] == uri]:
            if not errors or key[1] != diagnostic_key(convert.to_data(errors[0])):
                self.tasks.pop(key).cancel()  # the error it was fixing is gone or changed
        if not errors:
            return
        data = convert.to_data(errors[0])
        key = (uri, diagnostic_key(data))
        if key in self.tasks or self.patches.verified_for(uri, data):
            return
        self.tasks[key] = asyncio.ensure_future(self._background_fix(uri, job.version, data, key))

    def _background_allowed(self) -> bool:
        """No LLM request without a user action on that endpoint: an agent command sent to it from this machine,
        or `backgroundAgent` in the user's settings (a workspace cannot set either: workspace_trust.py)."""
        settings = self.server.session.settings
        url = settings.llm_base_url or ""
        if settings.background_agent or self.used_endpoints.has(url):
            return True
        if url not in self._said_off:
            self._said_off.add(url)
            self.server.log(f"background fixes are off for the LLM endpoint {url}: run a CuTeGen agent command "
                            "(Fix, Diagnose, Optimize) with it once, or turn on "
                            f"{settings.name_of('background_agent')} in your user settings")
        return False

    def _first_use(self) -> None:
        """A command is about to send work to the endpoint: remember it for the background fix, and name it the
        first time, so that a request never goes to an endpoint the user has not seen."""
        settings = self.server.session.settings
        if settings.llm_base_url and self.llm_configured() and self.used_endpoints.add(settings.llm_base_url):
            self.server.show(f"CuTeGen: sending this kernel to the LLM endpoint {settings.llm_base_url} "
                             f"(model {settings.llm_model}) for the first time on this machine.",
                             types.MessageType.Info)

    async def _background_fix(self, uri: str, version: int | None, data: dict, key) -> None:
        try:
            answer = await self.fix(uri, version, data, background=True)
            self.server.log(f"background fix of {Path(uri).name}: {answer.get('message') or answer['patch']['verified']}")
        except asyncio.CancelledError:
            pass
        except Exception:
            self.server.log_exception("background fix failed")
        finally:
            if self.tasks.get(key) is asyncio.current_task():
                del self.tasks[key]

    # -- commands -------------------------------------------------------------------------------

    async def fix(self, uri: str, version: int | None, data: dict | None, *, background: bool = False) -> dict:
        if not self.llm_configured():
            from cutegen.agent.llm import configured

            return _message(f"The CuTeGen agent is not configured: {configured(self.server.session.settings)}.")
        path, text, now = self._document(uri)
        if path is None or text is None:
            return _message(f"{uri}: no such file")
        key = (uri, diagnostic_key(data))
        existing = self.patches.verified_for(uri, data)
        if existing and existing.proposal.base_text == text:
            return {"ok": True, "patch": existing.to_json(), "message": existing.proposal.label}
        running = self.tasks.get(key)
        if not background and running is not None and not running.done():
            await asyncio.shield(running)
            existing = self.patches.verified_for(uri, data)
            if existing and existing.proposal.base_text == text:
                return {"ok": True, "patch": existing.to_json(), "message": existing.proposal.label}
        diagnostic = convert.from_data(data) if data else None
        # Nothing named: the first compile error, else the failing test, as `cutegen fix` does.
        call = (lambda a: a.fix(path, text, diagnostic=diagnostic)) if diagnostic else (
            lambda a: a.fix_first_problem(path, text))
        outcome = await self._run(path, f"fixing {path.name}", call, progress=not background)
        if outcome.diagnosis and data:  # a diagnostic was named: `diagnostic` is made from `data`
            self._annotate(uri, data, outcome.diagnosis, outcome.diagnosis_source)
        usage = outcome.usage.to_json()  # tokens and LLM wait of this action
        if outcome.proposal is None:
            return _message(outcome.message, transcript=outcome.transcript, usage=usage)
        stored = self.patches.store(uri, now, outcome.proposal, diagnostic_key(data))
        return {"ok": True, "patch": stored.to_json(), "message": outcome.message, "transcript": outcome.transcript,
                "usage": usage}

    async def diagnose(self, uri: str, data: dict | None) -> dict:
        path, text, _ = self._document(uri)
        if path is None or text is None:
            return _message(f"{uri}: no such file")
        diagnostic = convert.from_data(data) if data else self._first_error(uri)
        if diagnostic is None:
            return _message(f"{path.name} has no error to diagnose (run Test for a wrong result, Profile for speed).")
        outcome = await self._run(path, f"diagnosing {path.name}", lambda a: a.diagnose(path, text, diagnostic=diagnostic))
        if outcome.diagnosis:
            self._annotate(uri, convert.to_data(diagnostic), outcome.diagnosis, outcome.diagnosis_source)
        return {"ok": outcome.ok, "message": outcome.message, "diagnosis": outcome.diagnosis,
                "source": outcome.diagnosis_source, "transcript": outcome.transcript, "usage": outcome.usage.to_json()}

    async def generate(self, uri: str) -> dict:
        """A first kernel for a reference problem (.py), fixed until it verifies, proposed as a new file next
        to it: `<stem>.cu`, or `<stem>_cutegen.cu` when that exists (the user's file is never replaced)."""
        problem = path_of(uri)
        if problem is None or problem.suffix != ".py" or not problem.is_file():
            return _message("Generate needs a reference problem file (.py with Model, get_inputs, get_init_inputs).")
        kernel = problem.with_suffix(".cu")
        if kernel.exists():
            kernel = problem.with_name(f"{problem.stem}_cutegen.cu")
        outcome = await self._run(kernel, f"generating {kernel.name}", lambda a: a.generate(problem, kernel))
        if outcome.proposal is None:
            return _message(outcome.message)
        stored = self.patches.store(uri_of(kernel), None, outcome.proposal)
        return {"ok": True, "patch": stored.to_json(), "message": outcome.message}

    async def optimize(self, uri: str) -> dict:
        answer = await self._whole_file(uri, "optimizing", lambda a, path, text: a.optimize(path, text))
        self.server.refresh_code_lens()  # a search's tree names its best version on the kernel (lsp/versions.py)
        return answer

    async def restore_best(self, uri: str) -> dict:
        return await self._whole_file(uri, "restoring the best version of", lambda a, path, text: a.restore_best(path, text))

    async def restore_version(self, uri: str, vid: str) -> dict:
        return await self._whole_file(uri, "restoring a version of",
                                      lambda a, path, text: a.restore_version(path, text, vid))

    async def tune(self, uri: str) -> dict:
        return await self._whole_file(uri, "tuning", lambda a, path, text: a.tune(path, text))

    async def _whole_file(self, uri: str, verb: str, call) -> dict:
        path, text, now = self._document(uri)
        if path is None or text is None:
            return _message(f"{uri}: no such file")
        outcome = await self._run(path, f"{verb} {path.name}", lambda a: call(a, path, text))
        extra = {"transcript": getattr(outcome, "transcript", None),
                 "usage": outcome.usage.to_json() if getattr(outcome, "usage", None) else None}
        if outcome.proposal is None:
            return _message(outcome.message, **extra)
        stored = self.patches.store(uri, now, outcome.proposal)
        return {"ok": True, "patch": stored.to_json(), "message": outcome.message,
                **{k: v for k, v in extra.items() if v is not None}}

    async def _run(self, path: Path, what: str, call, progress: bool = True):
        """Run an agent call in a thread, one at a time, with progress and cancellation."""
        if progress:  # a user's command
            self._first_use()
        async with self.slots():
            if not progress:
                agent = await asyncio.to_thread(self._agent, path)
                try:
                    return await asyncio.to_thread(call, agent)
                except asyncio.CancelledError:
                    agent.cancel()
                    raise
            async with Work(self.server, f"CuTeGen: {what}") as work:
                agent = await asyncio.to_thread(self._agent, path, work.report)
                try:
                    outcome = await asyncio.to_thread(call, agent)
                except asyncio.CancelledError:
                    agent.cancel()
                    work.end_message = "cancelled"
                    raise
                work.end_message = outcome.message[:80]
                return outcome

    def _first_error(self, uri: str) -> Diagnostic | None:
        return next((d for _, d in self.server.published.at(uri) if d.severity is Severity.ERROR), None)

    def _annotate(self, uri: str, data: dict, diagnosis: str, source: str) -> None:
        """Show the diagnosis on hover: the hover reads the published diagnostics' explanations."""
        key = diagnostic_key(data)
        title = "**CuTeGen agent diagnosis**" if source == "llm" else "**Knowledge base diagnosis**"
        for _, d in self.server.published.at(uri):
            if diagnostic_key(convert.to_data(d)) == key and title not in d.explanation:
                d.explanation = f"{d.explanation}\n\n---\n\n{title}\n\n{diagnosis}".strip()

    # -- applying -----------------------------------------------------------------------------

    async def apply(self, pid: str, uri: str, version: int | None) -> dict:
        stored = self.patches.get(pid)
        if stored is None:
            return {"applied": False, "message": "no such verified patch (it was made before the server restarted?)"}
        uri = uri or stored.uri
        path, text, now = self._document(uri)
        p = stored.proposal
        if text is None and p.base_text == "":
            return await self._create(uri, path, p)
        if text is None:
            return {"applied": False, "message": f"{uri}: no such file"}
        note = p.label
        if text == p.new_text:
            return {"applied": False, "message": "the patch is already in the file"}
        new_text = p.new_text
        if text != p.base_text:
            if path is None:  # never: applyPatch's uri is checked to name a file, and only a file can re-verify
                return {"applied": False, "message": f"{uri} is not a file on disk; nothing was changed"}
            rebased = await self._rebase(path, text, p)
            if isinstance(rebased, str):
                return {"applied": False, "message": rebased}
            new_text, note = rebased
        edit = replace_edit(uri, now, minimal_edits(text, new_text),
                            self.server.supports("workspace.workspace_edit.document_changes"))
        try:
            answer = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=f"CuTeGen: {p.action} ({p.short})"))
        except Exception as e:
            return {"applied": False, "message": f"the editor refused the edit: {e}"}
        if not answer.applied:
            return {"applied": False, "message": f"the editor did not apply the edit: "
                                                 f"{answer.failure_reason or 'the document changed meanwhile'}; nothing was changed"}
        asyncio.ensure_future(self._recheck(uri, now))
        return {"applied": True, "message": f"applied: {note}"}

    async def _create(self, uri: str, path: Path | None, p) -> dict:
        """A generated kernel: create the file through the editor (one undoable operation) when it can,
        else write it (it does not exist, so nothing of the user's is touched)."""
        if path is not None and path.exists():
            return {"applied": False, "message": f"{path.name} exists now; nothing was changed: generate again"}
        ops = get_capability(self.server.client_capabilities, "workspace.workspace_edit.resource_operations", None)
        if types.ResourceOperationKind.Create in (ops or []):
            edit = create_file_edit(uri, p.new_text)
            answer = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=f"CuTeGen: {p.action} ({p.short})"))
            if not answer.applied:
                return {"applied": False, "message": f"the editor did not create the file: {answer.failure_reason}"}
        elif path is not None:
            try:
                write_atomic(path, p.new_text, new=True)
            except OSError as e:  # a full disk, or the file appeared meanwhile: nothing was overwritten
                return {"applied": False, "message": str(e)}
        self.server.checks.schedule(uri)
        return {"applied": True, "message": f"created {Path(path or uri).name}: {p.label}"}

    async def _rebase(self, path: Path, text: str, p) -> tuple[str, str] | str:
        """The verified change re-based onto the current text and verified again (Agent.rebase), or why not."""
        outcome = await self._run(path, f"re-verifying the patch on {path.name}", lambda a: a.rebase(path, text, p))
        if outcome.proposal is None:
            return outcome.message
        return outcome.proposal.new_text, outcome.message

    async def _recheck(self, uri: str, version: int | None) -> None:
        """After the client applied an edit, check the new text once its didChange has arrived."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + APPLY_WAIT_S
        while loop.time() < deadline:
            doc = self.server.open_document(uri)
            if doc is None or doc.version != version:
                break
            await asyncio.sleep(0.05)
        self.server.checks.schedule(uri)


def _message(message: str, **extra) -> dict:
    return {"ok": False, "message": message, **{k: v for k, v in extra.items() if v is not None}}
