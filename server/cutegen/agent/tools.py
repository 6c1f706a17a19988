"""Tool-calling mode (cutegen.llmMode = "tools"): the model calls the engine's tools through the
endpoint's tool-calling API instead of following the fixed diagnose → patch → verify pipeline.

Tools: check, test, bench, profile, profile_lines (the engine's tiers, on the person's current text), knowledge_search
(the CuTe knowledge base), cute_api (the installed CUTLASS headers) and propose_patch (an edit in any
edit format; placed by the tolerant matcher, then verified exactly like a pipeline candidate). Only a
verified proposal ends the session with something to offer. The session stops at the call budget
(cutegen.llmToolCalls) or the time budget (cutegen.llmToolSeconds). An endpoint that does not take
tools raises LLMError("no-tools"): the caller falls back to the pipeline.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from cutegen.agent.llm import ToolCall, Usage, cut_off
from cutegen.agent.patch import apply_reply, unified
from cutegen.agent.verdicts import CandidateVerdict

if TYPE_CHECKING:
    from cutegen.agent.candidates import Verification
    from cutegen.records import RunRecord

RESULT_CHARS = 4000  # a tool result longer than this is cut: it goes back into the context window


def _fn(name: str, description: str, properties: dict | None = None, required: list[str] | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": required or []}}}


SPECS = [
    _fn("check", "Compile the current kernel file (nvcc front end, fast) and return its condensed diagnostics."),
    _fn("test", "Build the current kernel and test it against the PyTorch reference on the GPU (5 trials)."),
    _fn("bench", "Test, then time the current kernel (median ms, GB/s)."),
    _fn("profile", "Profile the current kernel with Nsight Compute: bottleneck classification and signals."),
    _fn("profile_lines", "Profile the current kernel line by line (Nsight Compute's warp samples folded onto the "
        "source): the hottest lines with their share, stall reasons and advice."),
    _fn("knowledge_search", "Search the CuTe knowledge base (error catalog, idioms, optimizations).",
        {"query": {"type": "string", "description": "an error message, API name or what you want to do"}}, ["query"]),
    _fn("cute_api", "Look up a CuTe/CUTLASS name in the installed headers: where it is defined and its code.",
        {"name": {"type": "string", "description": "e.g. make_tiled_copy, Copy_Atom, local_tile"}}, ["name"]),
    _fn("propose_patch", "Propose an edit to the kernel file. It is placed, compiled, tested (and timed when "
        "optimizing) before anyone sees it; the verdict comes back. A verified edit ends the session.",
        {"edit": {"type": "string", "description": "the edit, in the format the task asks for"}}, ["edit"]),
]


@dataclass
class ToolOutcome:
    proposal_text: str | None = None  # the verified new text
    edit: str = ""  # the edit (or reply) that produced it, as the model wrote it
    verification: Verification | None = None  # set with proposal_text
    notes: list[str] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)  # name, arguments, seconds, result (cut)
    stop: str = ""  # why the session ended


class ToolSession:
    """One tool-calling session for `kernel` whose current text is `text`."""

    def __init__(self, agent, kernel: Path, text: str, transcript, usage: Usage, *, baseline: dict | None = None):
        self.agent, self.kernel, self.text, self.t, self.usage = agent, Path(kernel), text, transcript, usage
        self.baseline = baseline
        self.settings = agent.settings
        self.out = ToolOutcome()

    def run(self, messages: list[dict]) -> ToolOutcome:
        s, started = self.settings, time.monotonic()
        messages = list(messages)
        turn = 0
        while True:
            if len(self.out.calls) >= s.llm_tool_calls:
                self.out.stop = f"the budget of {s.llm_tool_calls} tool calls (cutegen.llmToolCalls) is spent"
                return self.out
            if time.monotonic() - started > s.llm_tool_seconds:
                self.out.stop = f"the time budget of {s.llm_tool_seconds:.0f} s (cutegen.llmToolSeconds) is spent"
                return self.out
            turn += 1
            _fit_history(messages, self.agent.budget)
            reply = self.agent._ask(self.t, turn, "tools", messages, self.usage, tools=SPECS)
            if not reply.tool_calls:  # the model answered in text: an edit in it is a proposal, else it gave up
                if reply.finish_reason == "length" or not reply.text.strip():
                    self.out.stop = (f"the reply was {cut_off(s)} before any patch" if reply.truncated
                                     else "the model stopped without proposing a patch")
                    return self.out
                result = self._propose(reply.text, reply.finish_reason)
                if self.out.proposal_text is not None:
                    return self.out
                self.out.stop = f"the model answered without a tool call: {result[:200]}"
                return self.out
            messages.append({"role": "assistant", "content": reply.text or None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.tool_calls]})
            for call in reply.tool_calls:
                result = self._call(turn, call, started)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
                if self.out.proposal_text is not None:
                    self.out.stop = "a proposed patch verified"
                    return self.out

    # -- dispatch -----------------------------------------------------------------------------

    def _call(self, turn: int, call: ToolCall, started: float) -> str:
        t0 = time.monotonic()
        if len(self.out.calls) >= self.settings.llm_tool_calls or t0 - started > self.settings.llm_tool_seconds:
            result = "not run: the session's tool budget is spent"
        else:
            try:
                args = json.loads(call.arguments or "{}")
                if not isinstance(args, dict):
                    raise ValueError
            except ValueError:
                args = None
            handler = getattr(self, f"_tool_{call.name}", None)
            if handler is None:
                result = f"unknown tool {call.name!r}; the tools are: {', '.join(f['function']['name'] for f in SPECS)}"
            elif args is None:
                result = f"the arguments of {call.name} are not a JSON object: {call.arguments[:200]}"
            else:
                try:
                    result = handler(**{k: v for k, v in args.items() if isinstance(k, str)})
                except TypeError as e:
                    result = f"bad arguments for {call.name}: {e}"
        result = result if len(result) <= RESULT_CHARS else result[:RESULT_CHARS] + "\n[... cut ...]"
        record = {"name": call.name, "arguments": call.arguments[:2000], "seconds": round(time.monotonic() - t0, 3),
                  "result": result[:1500]}
        self.out.calls.append(record)
        self.t.step(turn, "tool", **record)
        return result

    # -- the tools ----------------------------------------------------------------------------

    def _tool_check(self) -> str:
        from cutegen.agent.candidates import describe_diagnostic
        from cutegen.compile import Tier

        # Model-written text: compiled by the jailed check builder (the kernel's view only), never the user's own.
        checker = self.agent.verifier.check_builder(self.kernel)
        r = checker.run(Tier.CHECK, self.kernel, self.text, job=f"agent-tool-check:{self.kernel}")
        if r.ok:
            warnings = len(r.diagnostics)
            return f"{self.kernel.name} compiles" + (f" with {warnings} warning(s):\n" if warnings else ".") + \
                "\n".join(describe_diagnostic(d, 300) for d in r.diagnostics[:3])
        return f"{self.kernel.name} does not compile:\n" + "\n".join(describe_diagnostic(d) for d in r.errors[:3])

    def _tool_test(self) -> str:
        v = self.agent.verifier.candidate(self.kernel, self.text)
        return f"{v.verdict}: {v.label}" + (f"\n{v.feedback}" if v.feedback else "")

    def _tool_bench(self) -> str:
        v = self.agent.verifier.candidate(self.kernel, self.text, timing=True)
        figures = {k: v.figures[k] for k in ("median_ms", "spread", "gb_per_s", "j_per_call", "energy_unmeasured")
                   if v.figures.get(k) is not None}
        return f"{v.verdict}: {v.label}" + (f"\nfigures: {figures}" if figures else "")

    def _tool_profile(self) -> str:
        from cutegen.agent import prompts

        record, why = self._profiled()
        return prompts.failure_text(self.kernel.name, self.text, profile=record) if record else f"no profile: {why}"

    def _tool_profile_lines(self) -> str:
        from cutegen.agent import prompts

        record, why = self._profiled()
        if not record:
            return f"no line profile: {why}"
        if record.lines is None:
            return f"no line profile: {record.details.get('lines_problem') or 'the profile has no per-line data'}"
        return prompts.hot_lines_text(self.kernel.name, record.lines, top=10)

    def _profiled(self) -> tuple[RunRecord | None, str]:
        """A profile of the current text (kernel-level and per line, one ncu run), or (None, why not)."""
        from cutegen.agent.knowledge import profile

        verifier = self.agent.verifier
        if not verifier.gpu:
            return None, "no GPU on this machine"
        # ncu runs the candidate's own library: only after it passed the gate, the library check and the jailed
        # test, and then inside the same jail (or unjailed only where the user turned the sandbox off).
        verified = verifier.candidate(self.kernel, self.text)
        if verified.verdict != CandidateVerdict.VERIFIED:
            return None, f"the candidate is not verified ({verified.verdict}: {verified.label})"
        jail, why_not = verifier.program_jail(self.kernel)
        if why_not:
            return None, why_not
        shadow, builder = verifier.shadow(self.kernel, self.text)
        record, why = profile(shadow, builder, verifier.worker, problem=verifier.problem_for(self.kernel),
                              state_dir=verifier.state_dir, jail=jail)
        return record, why or ""

    def _tool_knowledge_search(self, query: str = "") -> str:
        from cutegen.agent.knowledge import hit_text

        hits = self.agent.knowledge.query(str(query), k=3)
        if not hits:
            return "no entry in the knowledge base matches" + (f" ({'; '.join(self.agent.knowledge.problems)})"
                                                               if self.agent.knowledge.problems else "")
        return "\n\n".join(hit_text(h) for h in hits)

    def _tool_cute_api(self, name: str = "") -> str:
        from cutegen.toolchain import ToolchainError, find_cutlass_include

        try:
            include = find_cutlass_include(self.settings.cutlass_path)
        except ToolchainError as e:
            return f"no CUTLASS headers: {e}"
        return lookup(str(include), str(name))

    def _tool_propose_patch(self, edit: str = "") -> str:
        return self._propose(str(edit), "")

    def _propose(self, edit: str, finish_reason: str) -> str:
        p = apply_reply(edit, self.text, self.kernel.name, finish_reason=finish_reason,
                        fmt=self.settings.llm_edit_format)
        if p.new_text is None:  # refused (the text is set exactly when ok)
            return f"refused ({p.kind}): {p.error}"
        v = self.agent.verifier.candidate(self.kernel, p.new_text, baseline=self.baseline)
        self.out.notes += p.notes
        if v.ok:
            self.out.proposal_text, self.out.verification, self.out.edit = p.new_text, v, edit
            return f"verified: {v.label}"
        return f"not verified ({v.verdict}): {v.label}" + (f"\n{v.feedback}" if v.feedback else "") + \
            f"\nThe diff that was tried:\n{unified(self.text, p.new_text, self.kernel.name)[:1500]}"


def _fit_history(messages: list[dict], budget) -> None:
    """Keep the growing conversation inside the context window: the oldest tool results are
    replaced by a one-line note first (the opening prompt and the latest results stay)."""
    def size() -> int:
        return sum(budget.tokens(str(m.get("content") or "")) + budget.tokens(json.dumps(m.get("tool_calls", "")))
                   for m in messages)

    old_results = [m for m in messages[:-2] if m.get("role") == "tool"]
    for m in old_results:
        if size() <= budget.limit:
            return
        m["content"] = "[this older tool result was left out to fit the context window]"


# -- CuTe API lookup ------------------------------------------------------------------------------

def _definition(name: str) -> re.Pattern:
    """A line that defines `name`, in CuTe's styles: `struct Name` (not a forward declaration),
    `using Name =`, a function whose name starts the line (its return type on the line before), or
    `CUTE_HOST_DEVICE constexpr auto name(` on one line."""
    n = re.escape(name)
    return re.compile(rf"^\s*(?:template\s*<.*>\s*)?(?:struct|class)\s+{n}\b(?!\s*;)|^\s*using\s+{n}\s*=|^{n}\s*\(|"
                      rf"^\s*(?:CUTE_HOST_DEVICE|CUTE_HOST|CUTE_DEVICE)\s+(?:constexpr\s+)?(?:static\s+)?[\w:<>]+\s+{n}\s*\(")


@lru_cache(maxsize=2)
def _headers(include: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    root = Path(include)
    files = sorted((root / "cute").rglob("*.hpp"))
    return tuple((str(f.relative_to(root)), tuple(f.read_text(errors="replace").splitlines())) for f in files)


def lookup(include: str, name: str, hits: int = 3, context: int = 14) -> str:
    """Where `name` is defined in the CuTe headers under `include`, with the code that defines it."""
    name = name.strip().removeprefix("cute::")
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return f"not a C++ name: {name!r}"
    pattern = _definition(name)
    found = []
    for rel, lines in _headers(include):
        for i, line in enumerate(lines):
            if name in line and pattern.search(line):
                found.append((rel, i))
    if not found:
        uses = sum(1 for _, lines in _headers(include) for line in lines if re.search(rf"\b{re.escape(name)}\b", line))
        return f"no definition of {name} in the CuTe headers" + (f" ({uses} lines use it)" if uses else "")
    out = [f"{len(found)} definition(s) of {name} in the CuTe headers; the first {min(hits, len(found))}:"]
    for rel, i in found[:hits]:
        lines = dict(_headers(include))[rel]
        start = max(0, i - 2)
        body = "\n".join(lines[start:start + context])
        out.append(f"{rel}:{i + 1}\n```cpp\n{body}\n```")
    return "\n".join(out)
