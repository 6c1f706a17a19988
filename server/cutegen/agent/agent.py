"""The agent loop: the LLM proposes, the harness decides, the person applies.

- diagnose: a short what/where/why from a diagnostic, a test verdict or a profile (the knowledge
  base's diagnosis alone without an LLM);
- fix: rounds of diagnose → patch → verify; a failure (rejected diff, compile error, wrong result)
  feeds the next round; only a verified patch comes back;
- optimize: ONE change from the workload's menu, guided by the profile, verified and timed against
  the current version in the same session; a change not faster beyond noise is reported, not proposed;
- generate: a first kernel for a problem, then repair rounds until it verifies.
Every step is written to a transcript; the API key never is.
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from cutegen import records
from cutegen.agent import objective, prompts
from cutegen.agent.budget import Budget
from cutegen.agent.history import History, measured_figures, text_id
from cutegen.agent.search import Limits, Search, Shape, diff_to, proposal_label
from cutegen.agent.tree import VersionTree
from cutegen.agent.knowledge import Knowledge, classify_workload, hit_text, menu_text, profile
from cutegen.agent.llm import LLMClient, LLMError, Usage, configured, cut_off
from cutegen.agent.diff_text import whole_file
from cutegen.agent.patch import apply_reply, unified
from cutegen.agent.transcript import Transcript, excerpt
from cutegen.agent.candidates import CandidateRunner, Verifier
from cutegen.agent.verdicts import CandidateVerdict, DiagnoseVerdict, RoundVerdict
from cutegen.model import Diagnostic
from cutegen.settings import Settings
from cutegen.state import StateDir


@dataclass
class Proposal:
    """A verified patch: what the person is offered."""

    kernel: str
    base_text: str  # the text it was verified against
    new_text: str
    diff: str
    label: str  # "compiles · correct on 5 trials · 1.8× faster than before (…)"
    short: str  # "compiled, not run"
    figures: dict
    action: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class AgentResult:
    ok: bool
    message: str
    proposal: Proposal | None = None
    diagnosis: str | None = None
    diagnosis_source: str = "none"  # "llm", "knowledge" or "none"
    usage: Usage = field(default_factory=Usage)
    transcript: str | None = None
    rounds: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["usage"] = self.usage.to_json()
        return d


@functools.lru_cache(maxsize=1)
def _knowledge() -> Knowledge:
    return Knowledge()  # loaded once per process: the data does not change under a running server


class Agent:
    def __init__(self, settings: Settings, builder, worker=None, *, state_dir: Path | StateDir, problem=None,
                 trials: int = 5, on_stage=None, gpu: bool | None = None, llm: LLMClient | None = None,
                 candidate_runner: CandidateRunner | None = None):
        self.settings = settings
        self.state_dir = Path(state_dir)
        self.on_stage = on_stage or (lambda s: None)
        self.verifier = Verifier(builder, worker, state_dir=self.state_dir, problem=problem, trials=trials,
                                 on_stage=self.on_stage, gpu=gpu, candidate_runner=candidate_runner,
                                 objective=settings.optimize_objective)
        self.llm, self.llm_problem = llm, None
        self.budget = Budget(settings.llm_context_tokens, settings.max_tokens)  # fits every prompt to the window
        if llm is None:
            self.llm_problem = configured(settings)
            if self.llm_problem is None:
                try:
                    self.llm = LLMClient(settings, state_dir=self.state_dir)
                except LLMError as e:
                    self.llm_problem = e.message

    @property
    def knowledge(self) -> Knowledge:
        return _knowledge()

    def cancel(self) -> None:
        self.verifier.cancel()

    def _secrets(self) -> list[str]:
        return self.llm.secrets() if self.llm else []

    # -- diagnose -----------------------------------------------------------------------------

    def diagnose(self, kernel: Path, text: str, *, diagnostic: Diagnostic | None = None,
                 record: records.RunRecord | None = None, profile_record: records.RunRecord | None = None,
                 write_record: bool = True) -> AgentResult:
        kernel = Path(kernel).resolve()
        kb_md = self._kb_diagnosis(text, diagnostic, record, profile_record)
        out = AgentResult(bool(kb_md), kb_md or "", diagnosis=kb_md, diagnosis_source="knowledge" if kb_md else "none")
        if self.llm is not None:
            t = Transcript(self.state_dir, kernel, "diagnose", self._secrets())
            failure = prompts.failure_text(kernel.name, text, diagnostic=diagnostic, record=record, profile=profile_record)
            try:
                reply = self._ask(t, 1, "diagnose", prompts.diagnose(kernel.name, text, failure, self._hits(
                    text, diagnostic, record, profile_record), [], self.budget), out.usage)
                out.ok, out.diagnosis, out.diagnosis_source = True, self._shown(reply, t), "llm"
                out.message = out.diagnosis
            except LLMError as e:
                out.message = (kb_md + "\n\n" if kb_md else "") + f"(LLM diagnosis unavailable: {e.message})"
            out.transcript = str(t.finish(ok=out.ok, diagnosis=out.diagnosis, usage=out.usage.to_json()))
        elif not kb_md:
            out.message = f"No diagnosis: {self.llm_problem}, and the knowledge base has no entry for this."
        elif self.settings.llm_base_url or self.settings.llm_model:  # half configured: say why no LLM answered
            out.message += f"\n\n(LLM diagnosis unavailable: {self.llm_problem})"
        if write_record:
            records.write(self.state_dir, "diagnose", str(kernel), {
                "verdict": DiagnoseVerdict.DIAGNOSED if out.ok else DiagnoseVerdict.NO_DIAGNOSIS,
                "message": out.message[:300],
                "diagnosis": out.diagnosis, "source": out.diagnosis_source, "usage": out.usage.to_json(),
                "diagnostic": diagnostic.to_json() if diagnostic else None, "transcript": out.transcript})
        return out

    def _hits(self, text, diagnostic, record, profile_record) -> list[str]:
        return [hit_text(h) for h in self._search(text, diagnostic, record, profile_record)]

    def _search(self, text, diagnostic, record: records.RunRecord | None,
                profile_record: records.RunRecord | None) -> list:
        mismatch = record.mismatch.to_json() if record is not None and record.mismatch is not None else None
        figures = profile_record.profile if profile_record is not None else None
        return self.knowledge.search(diagnostic=diagnostic, mismatch=mismatch,
                                     verdict=record.verdict if record else None,
                                     signals=figures.signal_evidence() if figures else None, source=text, k=3)

    def _kb_diagnosis(self, text, diagnostic, record, profile_record) -> str | None:
        hits = self._search(text, diagnostic, record, profile_record)
        return self.knowledge.diagnosis_markdown(hits[0]) if hits else None

    # -- fix ----------------------------------------------------------------------------------

    def first_error(self, kernel: Path, text: str) -> Diagnostic | None:
        """The first error of a check build of `text`: the file's own before one in a header."""
        from cutegen.compile import Tier

        kernel = Path(kernel).resolve()
        result = self.verifier.builder.run(Tier.CHECK, kernel, text)
        mine = [d for d in result.errors if d.file == str(kernel)]
        first = mine or result.errors
        return first[0] if first else None

    def fix_first_problem(self, kernel: Path, text: str) -> AgentResult:
        """A fix with nothing named: the first compile error, else the failing test (with a paired problem and a
        GPU), else nothing to fix. The CLI's `fix` and the editor's fix without a diagnostic."""
        from cutegen.harness.run import verify_kernel

        kernel = Path(kernel).resolve()
        diagnostic = self.first_error(kernel, text)
        if diagnostic is not None:
            return self.fix(kernel, text, diagnostic=diagnostic)
        v = self.verifier
        if v.problem_for(kernel) is None or not v.gpu:
            return AgentResult(False, f"{kernel.name} compiles; without a paired problem and a GPU there is no failing "
                                  "test to fix")
        record = verify_kernel(kernel, v.builder, v.worker, problem=v.problem, trials=v.trials,
                               state_dir=self.state_dir)
        if record.passed:
            return AgentResult(True, f"{kernel.name} passes its test: nothing to fix")
        return self.fix(kernel, text, record=record)

    def fix(self, kernel: Path, text: str, *, diagnostic: Diagnostic | None = None,
            record: records.RunRecord | None = None) -> AgentResult:
        kernel = Path(kernel).resolve()
        if self.llm is None:
            kb = self._kb_diagnosis(text, diagnostic, record, None)
            return AgentResult(False, f"No fix proposed: {self.llm_problem}.", diagnosis=kb,
                           diagnosis_source="knowledge" if kb else "none")
        t = Transcript(self.state_dir, kernel, "fix", self._secrets())
        failure = prompts.failure_text(kernel.name, text, diagnostic=diagnostic, record=record)
        if self.settings.llm_mode == "tools":
            out = self._tool_session(kernel, text, prompts.tools(
                kernel.name, text, "fix", failure, edit_format=self.settings.llm_edit_format,
                calls=self.settings.llm_tool_calls, budget=self.budget), t, "fix")
            if out is not None:
                return self._end(t, out)
        return self._end(t, self._repair(kernel, text, failure, self._hits(text, diagnostic, record, None), t, "fix"))

    def _repair(self, kernel: Path, text: str, failure: str, knowledge: list[str], t: Transcript, action: str,
                *, chain: bool = False, usage: Usage | None = None, rounds: int | None = None) -> AgentResult:
        """Rounds of diagnose → patch → verify against `text`. With `chain`, a candidate that got
        further (compiled) becomes the text the next round patches (generate); without, every round
        patches the user's text, so the result stays a local change to what they wrote."""
        name, base = kernel.name, text
        out = AgentResult(False, "", usage=usage or Usage())
        previous: list[tuple[str, str]] = []
        for r in range(1, (rounds or self.settings.max_rounds) + 1):
            try:
                diag = self._ask(t, r, "diagnose", prompts.diagnose(name, text, failure, knowledge, previous, self.budget),
                                 out.usage)
                out.diagnosis, out.diagnosis_source = self._shown(diag, t), "llm"
                reply = self._ask(t, r, "patch", prompts.patch(name, text, failure, out.diagnosis, previous,
                                                               self.settings.llm_edit_format, self.budget), out.usage)
            except LLMError as e:
                out.message = f"No fix proposed: {e.message}."
                out.rounds.append({"round": r, "verdict": RoundVerdict.LLM_ERROR, "message": e.message})
                return out
            p, v = self._round(t, r, kernel, text, reply, out, previous, whole_file_ok=not chain)
            if v is None:
                continue
            if v.verdict == CandidateVerdict.CANCELLED:
                out.message = "cancelled"
                return out
            if v.ok:
                out.ok, out.message = True, v.label
                out.proposal = Proposal(str(kernel), base, p.new_text, unified(base, p.new_text, name), v.label,
                                        v.short, {**v.figures, "rounds": r, "tiers": v.tiers}, action)
                return out
            previous.append((p.diff, v.feedback or v.label))
            if chain and v.verdict != CandidateVerdict.CHECK_FAILED:
                text, failure, previous = p.new_text, v.feedback or v.label, []
        summary = "; ".join(f"round {x['round']}: {x['verdict']}" + (
            f" ({x['message'][:120]})" if x["verdict"] == RoundVerdict.PATCH_REJECTED else "") for x in out.rounds)
        out.message = f"No verified fix after {len(out.rounds)} round(s) ({summary})."
        return out

    def _round(self, t: Transcript, r: int, kernel: Path, text: str, reply, out: AgentResult,
               previous: list[tuple[str, str]], *, whole_file_ok: bool = True, baseline: dict | None = None,
               about: Callable[[str | None], dict] = lambda new: {}):
        """One round's reply applied to `text` and verified, the round written to `out.rounds` and the transcript.
        Returns (patch, verification); the verification is None when the edit was rejected (its reason is then in
        `previous`, for the next round's prompt). `about(new_text or None)`: what the caller adds to the round."""
        p = apply_reply(reply.text, text, kernel.name, finish_reason=reply.finish_reason, whole_file_ok=whole_file_ok,
                        fmt=self.settings.llm_edit_format)
        if p.new_text is None:  # rejected (the text is set exactly when ok)
            previous.append((p.raw or reply.text[:1500], f"the edit was rejected: {p.error}"))
            out.rounds.append({"round": r, **about(None), "verdict": RoundVerdict.PATCH_REJECTED, "message": p.error})
            t.step(r, "patch-rejected", error=p.error, notes=p.notes, raw=p.raw)
            return p, None
        v = self.verifier.candidate(kernel, p.new_text, baseline=baseline)
        extra = about(p.new_text)
        out.rounds.append({"round": r, **extra, "verdict": v.verdict, "message": v.label, "notes": p.notes})
        t.step(r, "verify", **extra, diff=p.diff, notes=p.notes, verification=v.to_json())
        return p, v

    # -- optimize -----------------------------------------------------------------------------

    def optimize(self, kernel: Path, text: str) -> AgentResult:
        kernel = Path(kernel).resolve()
        if self.llm is None:
            return AgentResult(False, f"Optimize needs an LLM: {self.llm_problem}.")
        shape = Shape.parse(self.settings.optimize_search)
        if not shape.greedy:
            return self.search(kernel, text, shape)
        t = Transcript(self.state_dir, kernel, "optimize", self._secrets())
        out = AgentResult(False, "")
        base = self._measure_current(kernel, text, t)
        if not base.ok:
            out.message = f"Optimize needs a passing kernel; the current version: {base.label}"
            return self._end(t, out)
        measured = "time" in base.tiers
        problem = self.verifier.problem_for(kernel)
        source = problem.read_text(errors="replace") if problem else ""
        workload = classify_workload(source, text)
        if self.settings.llm_mode == "tools":
            figures = base.figures
            context = (f"Workload: {workload}. Current version: " + (f"{figures['median_ms']:.3f} ms median" if measured
                       else f"not timed ({base.label})") + ". Make it faster by ONE change from this menu (start "
                       "your reply with `CHANGE: <the menu item>`):\n"
                       + "\n".join(menu_text(i) for i in self.knowledge.menu(workload)))
            tools_out = self._tool_session(kernel, text, prompts.tools(
                kernel.name, text, "optimize", context, edit_format=self.settings.llm_edit_format,
                calls=self.settings.llm_tool_calls, budget=self.budget), t, "optimize",
                baseline=figures if measured else None)
            if tools_out is not None:
                if tools_out.proposal and not measured:
                    tools_out.proposal.label = tools_out.message = f"{tools_out.message} · speed not measured"
                return self._end(t, tools_out)
        started = time.perf_counter()
        prof, why = self._profile_current(kernel, text, base, problem)
        t.step(0, "context", workload=workload, profile=prof.to_json() if prof else None, profile_problem=why,
               profile_s=time.perf_counter() - started, knowledge_problems=self.knowledge.problems)
        classification = prof.profile.classification if prof is not None and prof.profile is not None else None
        menu = [menu_text(i) for i in self.knowledge.menu(workload)]
        figures = base.figures
        before = (f"{figures['median_ms']:.3f} ms median" + (f", {figures['gb_per_s']:.0f} GB/s" if figures.get("gb_per_s")
                                                             else "")) if measured else f"not timed ({base.label})"
        if measured and self.settings.optimize_objective != "time":  # the model is told what "better" is judged by
            before += objective.goal_text(self.settings.optimize_objective, figures)
        profile_txt = prompts.failure_text(kernel.name, text, profile=prof) if prof else f"No profile: {why}."
        hot = hot_lines(prof, kernel.name)
        previous: list[tuple[str, str]] = []
        history = History(self.state_dir, kernel)
        for r in range(1, self.settings.max_rounds + 1):
            try:
                reply = self._ask(t, r, "optimize", prompts.optimize(kernel.name, text, workload=workload, baseline=before,
                                                                     profile=profile_txt, menu=menu, previous=previous,
                                                                     edit_format=self.settings.llm_edit_format,
                                                                     budget=self.budget),
                                  out.usage)
            except LLMError as e:
                out.message = f"No optimization proposed: {e.message}."
                out.rounds.append({"round": r, "verdict": RoundVerdict.LLM_ERROR, "message": e.message})
                break
            change = _change(reply.text)
            p, v = self._round(t, r, kernel, text, reply, out, previous, baseline=figures if measured else None,
                               about=functools.partial(_optimize_round, change, hot, text))
            if v is None:
                continue
            touched = out.rounds[-1]["hot_lines_touched"]
            if v.verdict == CandidateVerdict.CANCELLED:
                out.message = "cancelled"
                return self._end(t, out)
            if measured and "time" in v.tiers:
                history.record({"action": "optimize", "change": change, "verdict": v.verdict,
                                "speedup": v.figures.get("speedup"), "from": text_id(text), "to": text_id(p.new_text)},
                               [(text, _timing(figures, "current")), (p.new_text, _timing(v.figures, change))],
                               objective=self.settings.optimize_objective)
            if v.ok:
                label = v.label if measured else f"{v.label} · speed not measured"
                out.ok, out.message = True, f"{change}: {label}" if change else label
                out.proposal = Proposal(str(kernel), text, p.new_text, p.diff, label, v.short,
                                        {**v.figures, "change": change, "workload": workload, "rounds": r,
                                         "tiers": v.tiers, "profile": classification,
                                         "hot_lines_touched": touched}, "optimize")
                return self._end(t, out)
            previous.append((p.diff, (v.feedback or v.label) + _missed_hot_lines(hot, touched)))
        if not out.message:
            summary = "; ".join(f"round {x['round']}: {x.get('change') or ''} {x['message']}".strip() for x in out.rounds)
            out.message = f"No verified faster change in {len(out.rounds)} round(s): {summary}"
        return self._end(t, out)

    def _measure_current(self, kernel: Path, text: str, t: Transcript):
        """The current version verified and timed: what Optimize and the search start from."""
        self.on_stage("measuring the current version")
        base = self.verifier.candidate(kernel, text, timing=True)
        t.step(0, "baseline", verification=base.to_json())
        return base

    def _profile_current(self, kernel: Path, text: str, base, problem: Path | None
                         ) -> tuple[records.RunRecord | None, str | None]:
        """The current version's profile, or None and why (it was not timed: no profile to ask for)."""
        self.on_stage("profiling the current version")
        if "time" not in base.tiers:
            return None, f"the current version was not timed ({base.label})"
        return profile(*self.verifier.shadow(kernel, text), self.verifier.worker, problem=problem,
                       state_dir=self.state_dir)

    def search(self, kernel: Path, text: str, shape: Shape, *, limits: Limits | None = None,
               parallel: int | None = None) -> AgentResult:
        """An optimization search (agent/search.py) from `text`: its best verified version offered as one patch,
        the whole tree kept under .cutegen/ (`cutegen versions`)."""
        kernel = Path(kernel).resolve()
        if self.llm is None:
            return AgentResult(False, f"Optimize needs an LLM: {self.llm_problem}.")
        s = self.settings
        limits = limits or Limits(s.optimize_steps, s.optimize_minutes, s.optimize_tokens)
        t = Transcript(self.state_dir, kernel, "search", self._secrets())
        out = AgentResult(False, "")
        base = self._measure_current(kernel, text, t)
        if not base.ok:
            out.message = f"Optimize needs a passing kernel; the current version: {base.label}"
            return self._end(t, out)
        problem = self.verifier.problem_for(kernel)
        workload = classify_workload(problem.read_text(errors="replace") if problem else "", text)
        prof, why = self._profile_current(kernel, text, base, problem)
        items = self.knowledge.menu(workload)
        menu = {str(getattr(i, "title", i)): menu_text(i) for i in items}
        run = Search(self, kernel, text, shape, limits, transcript=t, usage=out.usage, parallel=parallel)
        profile_txt = prompts.failure_text(kernel.name, text, profile=prof) if prof else f"No profile: {why}."
        result = run.run(base, workload=workload, directions=list(menu), menu=menu, profile_txt=profile_txt)
        out.message, figures = proposal_label(result, kernel.name)
        out.rounds = [{"round": f.step, "change": f.change, "verdict": f.verdict, "message": f.why}
                      for f in result.tree.failures if f.step and f.node in result.tree.nodes]
        found = diff_to(result, text, kernel.name)
        if found is not None and result.best is not None:
            new_text, diff = found
            out.ok = True
            short = result.confirmed.short if result.confirmed else "best of the search"
            out.proposal = Proposal(str(kernel), text, new_text, diff, out.message, short,
                                    {**figures, "workload": workload, "shape": str(shape)}, "optimize")
        elif result.stats.stop == "cancelled":
            out.message = f"cancelled; {out.message}"
        return self._end(t, out)

    def restore_version(self, kernel: Path, text: str, vid: str) -> AgentResult:
        """A patch from the current text to a version of the kernel's tree (`cutegen versions`), re-checked first."""
        kernel = Path(kernel).resolve()
        tree = VersionTree(self.state_dir, kernel)
        node = tree.find(vid)
        if node is None:
            return AgentResult(False, f"{kernel.name} has no version {vid!r} (or more than one starts so): "
                                  "`cutegen versions` lists them")
        new = tree.text(node.id)
        if new is None:
            return AgentResult(False, f"the text of version {node.id} is missing from {tree.folder / 'versions'}")
        if new == text:
            return AgentResult(False, f"The current text is version {node.id} already.")
        v = self.verifier.candidate(kernel, new)
        if not v.ok:
            return AgentResult(False, f"Version {node.id} no longer verifies: {v.label}")
        label = f"restores version {node.id} ({node.change or 'the start'}: {node.label}) · re-verified: {v.label}"
        return AgentResult(True, label, Proposal(str(kernel), text, new, unified(text, new, kernel.name), label, v.short,
                                             {**v.figures, "version": node.id}, "restore"))

    def restore_best(self, kernel: Path, text: str) -> AgentResult:
        """A patch from the current text back to the best version (re-checked first): the tree's best by the
        objective it was searched with (`VersionTree.best`), else the best measured version of the history
        (greedy Optimize, timed saves) by its objective."""
        kernel = Path(kernel).resolve()
        tree = VersionTree(self.state_dir, kernel)
        best_version = tree.best()
        best_text = tree.text(best_version.id) if best_version is not None else None
        if best_version is not None and best_text is not None:
            if best_text == text:
                return AgentResult(False, f"The current text is already the best version {best_version.id[:10]} "
                                          f"({tree.ratio(best_version)}).")
            return self.restore_version(kernel, text, best_version.id)
        history = History(self.state_dir, kernel)
        found = history.best()
        if found is None:
            return AgentResult(False, f"No measured versions of {kernel.name} yet: run Optimize first.")
        best, best_text = found
        shown = objective.score(history.objective, best)
        figure = shown.text if isinstance(shown, objective.Score) else shown
        if best_text == text:
            return AgentResult(False, f"The current text is already the best measured version ({figure}).")
        v = self.verifier.candidate(kernel, best_text)
        if not v.ok:
            return AgentResult(False, f"The best version ({figure}) no longer verifies: {v.label}")
        label = f"restores the best measured version ({figure}) · re-verified: {v.label}"
        return AgentResult(True, label, Proposal(str(kernel), text, best_text, unified(text, best_text, kernel.name),
                                             label, v.short, {**v.figures, "best": best}, "restore"))

    # -- generate -----------------------------------------------------------------------------

    def generate(self, problem: Path, kernel: Path) -> AgentResult:
        from cutegen.toolchain import ABI_INCLUDE

        problem, kernel = Path(problem).resolve(), Path(kernel).resolve()
        if self.llm is None:
            return AgentResult(False, f"Generate needs an LLM: {self.llm_problem}.")
        self.verifier.problem = problem
        t = Transcript(self.state_dir, kernel, "generate", self._secrets())
        out = AgentResult(False, "")
        abi = (Path(ABI_INCLUDE) / "cutegen" / "abi.h").read_text()
        try:
            reply = self._ask(t, 1, "generate", prompts.generate(problem.name, problem.read_text(), kernel.name, abi),
                              out.usage)
        except LLMError as e:
            out.message = f"No kernel generated: {e.message}."
            return self._end(t, out)
        code = whole_file(reply.text.replace("\r\n", "\n")) or ""
        if reply.truncated:
            out.message = f"No kernel generated: the reply was {cut_off(self.settings)} before the kernel file ended."
            return self._end(t, out)
        if "cutegen_forward" not in code:
            out.message = "The reply holds no kernel file (one ```cuda block defining cutegen_forward)."
            return self._end(t, out)
        code = _with_directive(code, problem, kernel)
        v = self.verifier.candidate(kernel, code)
        t.step(1, "verify", verification=v.to_json())
        out.rounds.append({"round": 0, "verdict": v.verdict, "message": v.label})
        if v.ok:
            out.ok, out.message = True, v.label
            out.proposal = Proposal(str(kernel), "", code, unified("", code, kernel.name), v.label, v.short,
                                    {**v.figures, "tiers": v.tiers}, "generate")
            return self._end(t, out)
        fixed = self._repair(kernel, code, v.feedback or v.label, [], t, "generate", chain=True, usage=out.usage)
        fixed.rounds = out.rounds + fixed.rounds
        if fixed.proposal:
            fixed.proposal.base_text, fixed.proposal.diff = "", unified("", fixed.proposal.new_text, kernel.name)
        else:
            fixed.message = f"The generated kernel does not verify yet: {fixed.message}"
        return self._end(t, fixed)

    # -- tool-calling mode -------------------------------------------------------------------

    def _tool_session(self, kernel: Path, text: str, messages: list[dict], t: Transcript, action: str, *,
                      baseline: dict | None = None) -> AgentResult | None:
        """A tool-calling session (agent/tools.py) as an AgentResult, or None when the endpoint does not
        take tool calls (the caller then runs the pipeline; the transcript says why)."""
        from cutegen.agent.tools import ToolSession

        out = AgentResult(False, "")
        try:
            result = ToolSession(self, kernel, text, t, out.usage, baseline=baseline).run(messages)
        except LLMError as e:
            if e.kind == "no-tools":
                t.step(0, "fallback", reason=f"{e.message}; using the fixed pipeline")
                return None
            out.message = f"No {action} proposed: {e.message}."
            return out
        out.rounds = [{"round": i, "tool": c["name"], "verdict": RoundVerdict.TOOL, "message": c["result"][:300]}
                      for i, c in enumerate(result.calls, 1)]
        v = result.verification
        if result.proposal_text is None or v is None:  # the two are set together, by a verified proposal
            out.message = f"No verified {action} after {len(result.calls)} tool call(s): {result.stop}."
            return out
        out.ok, out.message = True, v.label
        out.proposal = Proposal(str(kernel), text, result.proposal_text, unified(text, result.proposal_text, kernel.name),
                                v.label, v.short, {**v.figures, "mode": "tools", "tool_calls": len(result.calls),
                                                   "tiers": v.tiers, "change": _change(result.edit)}, action)
        return out

    # -- plumbing -----------------------------------------------------------------------------

    def _ask(self, t: Transcript, round_no: int, step: str, messages: list[dict], usage: Usage, *,
             tools: list[dict] | None = None):
        self.on_stage(f"LLM: {step}")
        fit, self.budget.last = self.budget.last, {}  # how this prompt was fitted (empty: not fitted)
        if self.llm is None:  # never: every action that asks says first that no LLM is configured
            raise LLMError("not-configured", self.llm_problem or "no LLM is configured")
        try:
            reply = self.llm.chat(messages, cancel=self.verifier.cancel_event, **({"tools": tools} if tools else {}))
        except LLMError as e:
            if e.usage:
                usage.add(e.usage)
            t.step(round_no, step, messages=messages, error=e.message, kind=e.kind, budget=fit)
            raise
        usage.add(reply.usage)
        if fit:
            self.budget.last = fit
            self.budget.observe(reply.usage.prompt_tokens)
            self.budget.last = {}
        t.step(round_no, step, messages=messages, reply=reply.text, finish_reason=reply.finish_reason,
               model=reply.model, usage=reply.usage.to_json(), prompt_tokens=reply.usage.prompt_tokens,
               completion_tokens=reply.usage.completion_tokens, budget=fit, **reply.transcript(),
               tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls])
        return reply

    def _shown(self, reply, t: Transcript) -> str:
        """The answer as a person sees it: bounded (the transcript keeps it whole), and said when cut off."""
        text = excerpt(reply.text.strip(), t.folder)
        return text + (f"\n\n(the reply was {cut_off(self.settings)})" if reply.truncated else "")

    def _end(self, t: Transcript, out: AgentResult) -> AgentResult:
        self.verifier.clean_shadows()
        out.transcript = str(t.finish(ok=out.ok, message=out.message, usage=out.usage.to_json(), rounds=out.rounds,
                                      proposal=out.proposal.to_json() if out.proposal else None))
        return out

    # -- rebase and tune ------------------------------------------------------------------------

    def rebase(self, kernel: Path, text: str, proposal: Proposal) -> AgentResult:
        """A verified patch re-based onto `text` (the file changed since it was verified): its diff applied to the
        current text and the result verified again. The AgentResult's proposal is the re-based patch, else why not."""
        from cutegen.agent.patch import apply_diff

        kernel = Path(kernel).resolve()
        moved = apply_diff(proposal.diff, text, kernel.name, local=False)
        new_text = moved.new_text
        if new_text is None:  # not ok (the text is set exactly when ok)
            return AgentResult(False, "The file changed since this patch was verified, and the change no longer "
                                  f"applies to it ({moved.error}); nothing was changed: run it again on the "
                                  "current text.")
        v = self.verifier.candidate(kernel, new_text)
        if not v.ok:
            return AgentResult(False, f"The patch, re-based onto your edits, no longer verifies ({v.label}); "
                                  "nothing was changed.")
        label = f"re-based onto your edits and re-verified: {v.label}"
        diff = unified(text, new_text, kernel.name)
        return AgentResult(True, label, Proposal(str(kernel), text, new_text, diff, label, v.short,
                                             {**v.figures, "tiers": v.tiers}, proposal.action))

    def tune(self, kernel: Path, text: str):
        """Sweep the file's `// cutegen: tunable` constants (agent/tune.py; no LLM): a TuneResult whose proposal is
        the fastest correct values, when they beat the current ones beyond noise."""
        from cutegen.agent.tune import tune

        return tune(kernel, text, self.verifier, on_stage=self.on_stage)


def hot_lines(profile: records.RunRecord | None, name: str, top: int = prompts.HOT_LINES) -> set[int]:
    """The line numbers of the kernel file's hottest lines in a profile record (empty without a line profile)."""
    if profile is None or profile.lines is None:
        return set()
    return {h.line for h in [h for h in profile.lines.lines if h.file.endswith("/" + name)][:top]}


def _optimize_round(change: str, hot: set[int], text: str, new: str | None) -> dict:
    """What an Optimize round adds to its record: the change named, and the hot lines its edit touched."""
    if new is None:
        return {"change": change}
    return {"change": change, "hot_lines_touched": sorted(hot & changed_lines(text, new))}


def changed_lines(before: str, after: str) -> set[int]:
    """1-based lines of `before` that an edit replaced or deleted, and the line an insertion lands before."""
    import difflib

    out: set[int] = set()
    a, b = before.splitlines(), after.splitlines()
    for op, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            out.update(range(i1 + 1, i2 + 1))
        elif op == "insert":
            out.update({i1, i1 + 1} - {0})
    return out


def _missed_hot_lines(hot: set[int], touched: list[int]) -> str:
    """The hot-line preference, said to the model: an edit that failed and left every hot line alone is told
    where the profile says the time goes (a verified, faster edit elsewhere is still offered: a launch
    configuration can be the fix)."""
    if not hot or touched:
        return ""
    return (f"\nThat edit changed none of the hot lines ({', '.join(map(str, sorted(hot)))}), where the profile "
            "says the time goes: aim the next change at them.")


def _change(reply: str) -> str:
    """The menu item named on the reply's `CHANGE:` line, without the reason that follows it."""
    m = re.search(r"^\W*CHANGE:\s*(.+)$", reply, re.M | re.I)
    if not m:
        return ""
    item = re.split(r" — | - |: |; |\. ", m.group(1), maxsplit=1)[0]
    return item.strip(" *`")[:120]


def _timing(figures: dict, label: str) -> dict:
    return {**measured_figures(figures), "label": label}


def _with_directive(code: str, problem: Path, kernel: Path) -> str:
    """Pair the generated kernel with its problem (`// cutegen: problem=`), relative to the kernel."""
    if re.search(r"//\s*cutegen:\s*problem\s*=", code):
        return code
    import os

    rel = os.path.relpath(problem, kernel.parent)
    return f"// cutegen: problem={rel}\n{code}"
