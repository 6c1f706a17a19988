"""The prompts. Each user message starts with `TASK: <step>` so that transcripts read clearly and
scripted endpoints (tests) can match on the step. The kernel is shown without line numbers (numbered
lines get copied into diffs; the lines that matter are quoted with their number instead), except
when JSON line edits are asked for: those point at lines by number."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cutegen.agent.budget import Budget, Part

if TYPE_CHECKING:
    from cutegen.records import LineProfile, RunRecord

SYSTEM = """You are CuTeGen, an assistant for CUDA kernels written with CuTe (CUTLASS 4.x) that a kernel
engineer trusts. You work on exactly one .cu file. The kernel exports the CuTeGen C ABI launcher
`cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs, cudaStream_t stream)`
(from <cutegen/abi.h>); keep it, launch all work on `stream`, write every output element, never
write the inputs, never cache results between calls. Every change you propose is compiled, tested
against a PyTorch reference and timed before a person sees it: be precise, not verbose."""

DIFF_RULES = """Reply with ONE unified diff for `{name}` only, in a single ```diff block:
`--- a/{name}` and `+++ b/{name}` headers, `@@` hunks with 3 unchanged context lines around each change,
context copied exactly from the file. Small hunks that change only what must change: no rewrite of the
file, no other file, no line numbers inside the code lines."""

SEARCH_REPLACE_RULES = """Reply with SEARCH/REPLACE blocks for `{name}` only, each in this form:
```cuda
<<<<<<< SEARCH
the lines to change, copied exactly from the file, with one or two unchanged lines around them
=======
the new lines
>>>>>>> REPLACE
```
Each SEARCH part must occur exactly once in the file. Small blocks that change only what must change;
never elide code with `...` comments; no other file."""

JSON_RULES = """Reply with CuTeGen line edits for `{name}` in one ```json block: a list of
{{"action": "replace" | "insert" | "delete", "line_number": N, "num_lines": K, "new_code": "..."}}
on the numbered lines shown above (1-based). `replace` puts new_code in place of the K lines from
line N, `delete` removes them, `insert` puts new_code before line N (N = last line + 1 appends).
Every line_number refers to the file as shown; edits must not overlap. Never copy the `N |` prefixes
into new_code. Change only what must change."""

WHOLE_RULES = """Reply with the complete new `{name}` in one ```cuda block: every line, none elided
with `...` comments. Change only what must change."""

RULES = {"diff": DIFF_RULES, "search-replace": SEARCH_REPLACE_RULES, "json": JSON_RULES, "whole": WHOLE_RULES}


def asked_format(setting: str) -> str:
    """The format a prompt asks for under cutegen.llmEditFormat: `auto` asks for SEARCH/REPLACE."""
    return "search-replace" if setting == "auto" else setting


def edit_rules(name: str, setting: str = "auto") -> str:
    return RULES[asked_format(setting)].format(name=name)


def _kernel(name: str, text: str, numbered: bool = False) -> str:
    if numbered:
        width = len(str(len(text.splitlines())))
        text = "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(text.rstrip().splitlines(), 1))
        return f"The file `{name}`, with line numbers (not part of the file):\n```cuda\n{text}\n```"
    return f"The file `{name}`:\n```cuda\n{text.rstrip()}\n```"


_SHOWN = re.compile(r"^The file `[^`]+`(?P<numbered>, with line numbers[^\n]*)?:\n```cuda\n(?P<body>.*?)\n```$", re.M | re.S)


def shown_text(messages: list[dict]) -> str | None:
    """The kernel text a recorded prompt showed the model (line numbers removed), or None: what a
    replayed reply's line numbers refer to."""
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    m = _SHOWN.search(user) if isinstance(user, str) else None
    if m is None:
        return None
    lines = m.group("body").split("\n")
    if m.group("numbered"):
        lines = [re.sub(r"^\s*\d+ \| ?", "", line, count=1) for line in lines]
    return "\n".join(lines) + "\n"


def _quote(text: str, line: int, around: int = 2) -> str:
    lines = text.splitlines()
    lo, hi = max(1, line - around), min(len(lines), line + around)
    return "\n".join(f"{'>' if i == line else ' '} {i:4d} | {lines[i - 1]}" for i in range(lo, hi + 1))


def failure_text(name: str, text: str, *, diagnostic=None, record: RunRecord | None = None,
                 profile: RunRecord | None = None) -> str:
    """The problem to solve, condensed: a compiler diagnostic, a harness verdict (`record`, a test's) or a
    profile (`profile`, a profile's record)."""
    parts = []
    if diagnostic is not None:
        parts.append(f"Compiler error at `{name}` line {diagnostic.line}: {diagnostic.message}")
        if diagnostic.root and diagnostic.root not in diagnostic.message:
            parts.append(f"Root cause text: {diagnostic.root}")
        parts.append(_quote(text, diagnostic.line))
        if diagnostic.explanation:
            parts.append(f"Explanation from the diagnostics engine:\n{diagnostic.explanation[:1500]}")
    if record is not None:
        parts.append(f"Test verdict `{record.verdict}`: {record.message}")
        if record.mismatch is not None:
            m = record.mismatch.to_json()
            parts.append("Mismatch report: " + ", ".join(f"{k}={m[k]}" for k in (
                "pattern", "bad", "total", "max_abs", "max_rel", "first_bad_index", "expected", "got") if k in m))
    if profile is not None:
        p = profile.profile
        parts.append(f"Profile: {p.bound if p else '?'}-bound. {p.summary if p else ''}")
        for s in (p.signal_evidence() if p else [])[:6]:
            parts.append(f"- signal {s['name']}: {s['evidence']}")
        if profile.lines is not None:
            parts.append(hot_lines_text(name, profile.lines))
    return "\n".join(parts)


HOT_LINES = 5


def hot_lines_text(name: str, profile: LineProfile, top: int = HOT_LINES) -> str:
    """The per-line profile as the model reads it: each hot line's number, share, code, top stall reasons and
    the knowledge base's advice for its main reason (profiler/lines.py measured it; signals.yaml advises)."""
    if not profile.lines:
        return "Hot lines: no samples landed on lines of the kernel's files."
    out = [f"Hot lines (share of the kernel's warp samples; inlined CuTe code counts for the line that calls it; "
           f"{profile.user_share:.0%} of all samples are on these files). Change the hottest lines first:"]
    for h in profile.hottest(top):
        where = f"line {h.line}" if h.file.endswith("/" + name) or h.file == name else f"{h.file.rsplit('/', 1)[-1]}:{h.line}"
        stalls = ", ".join(f"{r} {c / max(h.samples, 1):.0%}" for r, c in h.top_stalls(3)) or "issuing (no stall)"
        out.append(f"- {where} ({h.share:.1%}): `{h.text}` — {stalls}")
        top_reason = h.top_stalls(1)
        advice = _stall_advice(top_reason[0][0]) if top_reason else None
        if advice:
            out.append(f"  advice for {top_reason[0][0]}: {advice}")
        if h.excess_sectors or h.excess_wavefronts:
            out.append(f"  {h.excess_sectors:,} excess global sectors, {h.excess_wavefronts:,} excess shared wavefronts")
    return "\n".join(out)


def _stall_advice(reason: str) -> str | None:
    try:
        from cutegen.knowledge import KnowledgeBase

        found = KnowledgeBase.load().advice_for_stall(reason)
    except Exception:  # no knowledge base in this build, or a broken one: the line stays, without advice
        return None
    return found[1] if found else None


def _previous(previous: list[tuple[str, str]]) -> str:
    if not previous:
        return ""
    out = ["Earlier attempts in this session failed; do not repeat them:"]
    for i, (diff, why) in enumerate(previous[-2:], 1):
        lang = "diff" if diff.lstrip().startswith(("---", "@@", "diff ")) else ""
        out.append(f"Attempt {i}:\n```{lang}\n{diff.strip()[:3000]}\n```\nResult: {why}")
    return "\n".join(out)


def _messages(parts: list, budget: Budget | None = None) -> list[dict]:
    """System + user message; with a budget, the user message is fitted into the context window."""
    parts = [p if isinstance(p, Part) else Part(p) for p in parts]
    user = budget.fit(SYSTEM, parts) if budget else "\n\n".join(p.text for p in parts if p.text)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _failure(failure: str) -> Part:
    return Part(failure, 0, "condensed diagnostics", cuttable=True)


def _hits(knowledge: list[str]) -> list[Part]:
    """The knowledge hits, best first; the weaker ones are left out first."""
    head = "Relevant entries of the CuTe knowledge base:\n"
    return [Part((head if i == 0 else "") + k, 2 + i, f"knowledge hit {i + 1}") for i, k in enumerate(knowledge)]


def diagnose(name: str, text: str, failure: str, knowledge: list[str], previous: list[tuple[str, str]],
             budget: Budget | None = None) -> list[dict]:
    parts = [Part(f"TASK: diagnose `{name}`"), _failure(failure), *_hits(knowledge),
             Part(_previous(previous), 20, "earlier attempts"), Part(_kernel(name, text), 0, "kernel"),
             Part("Answer in at most 6 lines of Markdown: **What** is wrong, **Where** (line), **Why**, and "
                  "**Fix**: the smallest change that fixes it. No code blocks.")]
    return _messages(parts, budget)


def patch(name: str, text: str, failure: str, diagnosis: str, previous: list[tuple[str, str]],
          edit_format: str = "auto", budget: Budget | None = None) -> list[dict]:
    parts = [Part(f"TASK: patch `{name}`"), _failure(failure), Part(f"Diagnosis:\n{diagnosis}", 1, "diagnosis"),
             Part(_previous(previous), 20, "earlier attempts"),
             Part(_kernel(name, text, asked_format(edit_format) == "json"), 0, "kernel"),
             Part(edit_rules(name, edit_format))]
    return _messages(parts, budget)


def optimize(name: str, text: str, *, workload: str, baseline: str, profile: str, menu: list[str],
             previous: list[tuple[str, str]], edit_format: str = "auto", budget: Budget | None = None) -> list[dict]:
    parts = [Part(f"TASK: optimize `{name}` by ONE change"), Part(f"Workload: {workload}. Current version: {baseline}."),
             _failure(profile or "No profile is available: reason from the code."),
             Part("Choose exactly ONE change from this menu, the one the profile signals point to:\n" + "\n".join(menu)),
             Part(_previous(previous), 20, "earlier attempts"),
             Part(_kernel(name, text, asked_format(edit_format) == "json"), 0, "kernel"),
             Part("First line of your reply: `CHANGE: <the menu item>` and one sentence why. Then:\n"
                  + edit_rules(name, edit_format)
                  + "\nThe change must keep the kernel correct for every input size and alignment.")]
    return _messages(parts, budget)


def search_step(name: str, text: str, *, workload: str, baseline: str, profile: str, direction: str,
                details: str, memory: str, edit_format: str = "auto", budget: Budget | None = None) -> list[dict]:
    """One candidate of an optimization search (agent/search.py): the direction is chosen for it (each candidate
    of a step gets another one), and the search's memory says what was tried already and how it went."""
    parts = [Part(f"TASK: optimize `{name}` by ONE change in the direction given"),
             Part(f"Workload: {workload}. This version: {baseline}."),
             _failure(profile or "No profile is available: reason from the code."),
             Part(f"Make this ONE change from the optimization menu:\nDIRECTION: {direction}\n{details}"),
             Part(memory, 20, "what the search learned"),
             Part(_kernel(name, text, asked_format(edit_format) == "json"), 0, "kernel"),
             Part("First line of your reply: `CHANGE: <the direction>` and one sentence why. Then:\n"
                  + edit_rules(name, edit_format)
                  + "\nThe change must keep the kernel correct for every input size and alignment.")]
    return _messages(parts, budget)


def tools(name: str, text: str, task: str, context: str, *, edit_format: str = "auto", calls: int = 12,
          budget: Budget | None = None) -> list[dict]:
    """The opening of a tool-calling session (agent/tools.py): the task, what is known, the kernel,
    and how to propose an edit."""
    parts = [Part(f"TASK: {task} `{name}` with tools"), _failure(context),
             Part(_kernel(name, text, asked_format(edit_format) == "json"), 0, "kernel"),
             Part(f"You may call these tools, at most {calls} calls in all: check (compile), test (against the "
                  "PyTorch reference), bench (time it), profile (Nsight Compute), profile_lines (the hottest source "
                  "lines and why they stall), knowledge_search (the CuTe "
                  "knowledge base), cute_api (a CuTe name in the installed headers), and propose_patch. Investigate "
                  "only as far as needed, then call propose_patch; its verdict comes back, and a verified patch "
                  "ends the session. The `edit` argument of propose_patch follows these rules:\n"
                  + edit_rules(name, edit_format))]
    return _messages(parts, budget)


ABI_SKELETON = """#include <cutegen/abi.h>
#include <cute/tensor.hpp>

namespace my_kernel {          // a named namespace: nvcc's host stub trips over anonymous ones with `using namespace cute`
using namespace cute;
__global__ void kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) { /* ... */ }
}  // namespace my_kernel

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  // check counts and dtypes (inputs[i].dtype.code == kDLFloat && .bits == 32), sizes via cutegen_numel(t),
  // pointers via cutegen_data<T>(t); launch on `stream`; return (int)cudaGetLastError();
}"""


def generate(problem_name: str, problem_source: str, kernel_name: str, abi_header: str) -> list[dict]:
    parts = [f"TASK: generate `{kernel_name}` for the problem `{problem_name}`",
             f"The reference (KernelBench format: Model.forward is what to compute; get_inputs() gives the "
             f"inputs in order; the outputs are Model.forward's outputs):\n```python\n{problem_source.rstrip()}\n```",
             f"The kernel ABI header <cutegen/abi.h>:\n```cpp\n{abi_header.rstrip()}\n```",
             f"The shape of a kernel file:\n```cuda\n{ABI_SKELETON}\n```",
             "Write a first correct CuTe kernel for it: handle every size (tails) and unaligned pointers, use "
             "64-bit indices, exact math. Reply with the complete file in one ```cuda block and nothing else."]
    return _messages(parts)
