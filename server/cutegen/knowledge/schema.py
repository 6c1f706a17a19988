"""The knowledge base's entry model and its schema: what a `cute_knowledge/**/*.md` file may say.

An entry is a Markdown file with a small YAML front matter (between `---` lines). The body is the
explanation; `## Before` / `## After` sections hold the fix as a minimal pair of C++ code blocks;
idioms and menu items have their own sections (`## When to use`, `## Pitfalls`, ...). Everything a
program needs to match on (recognizers, signals, preconditions) is in the front matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cutegen.harness.verdicts import MismatchPattern, Verdict
from cutegen.profiler.signals import Signal

KINDS = ("error", "idiom", "optimization")
WORKLOADS = ("elementwise", "reduction", "gemm", "other")

# The producers own these names: the profiler its signals, the harness its verdicts and mismatch patterns.
SIGNALS = tuple(s.value for s in Signal)
VERDICTS = tuple(v.value for v in Verdict)
MISMATCH_PATTERNS = tuple(p.value for p in MismatchPattern)
# What a snippet is expected to do under the check tier.
EXPECTS = ("fail", "warn", "compile")

RECOGNIZER_KEYS = ("codes", "root", "header", "api", "verdicts", "mismatch", "signals", "source", "message")


@dataclass
class Recognizer:
    """Exact patterns. A diagnostic matches when its code is in `codes` (if given) and one `root` regex
    matches its root or message (if given) and one `header` substring is in its header (if given)."""

    codes: list[str] = field(default_factory=list)
    root: list[str] = field(default_factory=list)  # regexes on Diagnostic.root + message
    header: list[str] = field(default_factory=list)  # substrings of data["header"] (e.g. cute/underscore.hpp)
    api: list[str] = field(default_factory=list)  # data["api"], e.g. cute::copy (a bonus, not required)
    verdicts: list[str] = field(default_factory=list)  # harness verdict names
    mismatch: list[str] = field(default_factory=list)  # mismatch pattern names
    message: list[str] = field(default_factory=list)  # regexes on a verdict's / mismatch's message
    signals: list[str] = field(default_factory=list)  # profiler signal names
    source: list[str] = field(default_factory=list)  # regexes on kernel source (comments stripped)

    def is_empty(self) -> bool:
        return not any(getattr(self, k) for k in RECOGNIZER_KEYS)


@dataclass
class Entry:
    id: str
    kind: str  # error | idiom | optimization
    title: str
    explanation: str  # Markdown (the body without the code sections)
    path: str = ""  # the file it came from
    summary: str = ""  # one sentence
    keywords: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    recognize: Recognizer = field(default_factory=Recognizer)
    # The fix as a minimal pair (C++); compiled by the test suite inside `context`.
    fix_before: str = ""
    fix_after: str = ""
    context: str = "cute"  # a file in cute_knowledge/contexts/ (NAME.cu) with a `// {{SNIPPET}}` line
    before_expect: str = "fail"  # fail | warn | compile
    after_expect: str = "compile"  # compile | warn
    arch: str | None = None  # build the snippets for this arch (e.g. sm_90 for the sm_90 vs sm_90a trap)
    after_arch: str | None = None  # the fix is a different target (default: arch)
    standalone: bool = False  # compile its snippets alone, never batched with other entries' snippets
    corpus: list[str] = field(default_factory=list)  # tests/corpus kernels of this class (for tests only)
    # idioms
    kernel: str = ""  # examples/idioms/NAME/NAME.cu, relative to the repository root
    problem: str = ""
    when: str = ""  # Markdown: when to use it
    pitfalls: str = ""  # Markdown
    workload: str = ""  # elementwise | reduction | gemm | other (menus, idioms)
    measured: str = ""  # idioms: the kernel's figure on its problem, with GPU and date, or "pending"
    next: str = ""  # idioms: the entry id of the next rung of a ladder (its `signals` say why to climb)
    # optimization menu items
    preconditions: list[str] = field(default_factory=list)
    expected_effect: str = ""
    signals: list[str] = field(default_factory=list)
    verify: str = ""
    order: int = 100  # position in its menu
    sections: dict[str, str] = field(default_factory=dict)  # every `## Heading` section, raw

    @property
    def text(self) -> str:
        """What BM25 indexes."""
        parts = [self.title, self.summary, " ".join(self.keywords), self.explanation, self.when, self.pitfalls,
                 self.expected_effect, " ".join(self.preconditions), " ".join(self.signals),
                 " ".join(self.recognize.root), " ".join(self.recognize.codes), " ".join(self.recognize.api),
                 " ".join(self.recognize.verdicts), " ".join(self.recognize.mismatch)]
        return "\n".join(p for p in parts if p)


_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def validate(entry: Entry, all_ids: set[str], contexts: set[str]) -> list[str]:
    """Schema problems of one entry (empty when valid)."""
    p: list[str] = []
    where = entry.path or entry.id
    if not _ID.match(entry.id or ""):
        p.append(f"{where}: id {entry.id!r} must be lowercase words joined by '-'")
    if entry.kind not in KINDS:
        p.append(f"{where}: kind {entry.kind!r} not in {KINDS}")
    if not entry.title.strip():
        p.append(f"{where}: empty title")
    if len(entry.explanation.strip()) < 40:
        p.append(f"{where}: the explanation is too short to help anyone")
    for r in entry.related:
        if r not in all_ids:
            p.append(f"{where}: related entry {r!r} does not exist")
        if r == entry.id:
            p.append(f"{where}: relates to itself")
    if entry.next and entry.next not in all_ids:
        p.append(f"{where}: next rung {entry.next!r} does not exist")
    rec = entry.recognize
    for name in rec.verdicts:
        if name not in VERDICTS:
            p.append(f"{where}: unknown verdict {name!r}")
    for name in rec.mismatch:
        if name not in MISMATCH_PATTERNS:
            p.append(f"{where}: unknown mismatch pattern {name!r}")
    for name in rec.signals + entry.signals:
        if name not in SIGNALS:
            p.append(f"{where}: unknown profiler signal {name!r}")
    for rx in rec.root + rec.source + rec.message:
        try:
            re.compile(rx)
        except re.error as e:
            p.append(f"{where}: bad regex {rx!r}: {e}")
    if entry.before_expect not in EXPECTS or entry.after_expect not in ("compile", "warn"):
        p.append(f"{where}: before_expect/after_expect must be one of {EXPECTS}")
    if (entry.fix_before or entry.fix_after) and entry.context not in contexts:
        p.append(f"{where}: context {entry.context!r} is not a file in cute_knowledge/contexts/")
    if entry.kind == "error":
        if rec.is_empty():
            p.append(f"{where}: an error entry needs a recognizer")
        if not entry.fix_before.strip() or not entry.fix_after.strip():
            p.append(f"{where}: an error entry needs a ## Before and a ## After code block")
        if entry.fix_before.strip() == entry.fix_after.strip():
            p.append(f"{where}: before and after are identical")
        if not entry.related:
            p.append(f"{where}: an error entry names at least one related entry")
    if entry.kind == "idiom":
        if not entry.kernel:
            p.append(f"{where}: an idiom names its kernel (examples/idioms/NAME/NAME.cu)")
        if not entry.when.strip() or not entry.pitfalls.strip():
            p.append(f"{where}: an idiom needs '## When to use' and '## Pitfalls' sections")
    if entry.kind == "optimization":
        if entry.workload not in WORKLOADS:
            p.append(f"{where}: workload {entry.workload!r} not in {WORKLOADS}")
        if not entry.preconditions:
            p.append(f"{where}: a menu item lists its preconditions")
        if not entry.expected_effect.strip() or not entry.verify.strip():
            p.append(f"{where}: a menu item states expected_effect and verify")
        if not entry.signals:
            p.append(f"{where}: a menu item names the profile signals that call for it")
    return p
