"""Builds the knowledge base's snippets with the check tier and says whether each does what its entry
claims: `fix_before` fails (or warns) with the entry's own recognizer matching, `fix_after` compiles clean.

Used by the test suite (tests/knowledge) and by bench/knowledge_retrieval.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cutegen.knowledge.base import KnowledgeBase
from cutegen.knowledge.schema import Entry
from cutegen.model import CheckResult, Severity


@dataclass
class SnippetOutcome:
    entry: str
    side: str  # before | after | kernel
    expect: str  # fail | warn | compile
    ok: bool  # it did what the entry claims
    compiled: bool  # the check tier accepted it (no errors)
    detail: str = ""
    seconds: float = 0.0
    diagnostics: list[dict] = field(default_factory=list)


def _arch_builder(builders: dict, arch: str | None, state_dir: Path):
    """One Builder per target arch (the default one under key None)."""
    if arch not in builders:
        from cutegen.compile import Builder
        from cutegen.settings import Settings
        from cutegen.toolchain import discover

        settings = Settings(arch=arch)
        builders[arch] = Builder(discover(settings), settings, state_dir)
    return builders[arch]


def judge(kb: KnowledgeBase, entry: Entry, side: str, expect: str, result: CheckResult) -> SnippetOutcome:
    errors = result.errors
    warnings = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    mine = [d for d in result.diagnostics if d.severity is not Severity.INFO
            and kb.recognizes(entry.id, diagnostic=d)]
    compiled = not errors and not result.cancelled
    diags = [d.to_json() for d in result.diagnostics if d.severity is not Severity.INFO]
    first = next(iter(errors or warnings), None)
    shown = first.format() if first else "clean"
    if expect == "fail":
        ok = bool(errors) and bool(mine)
        detail = ("fails with its own pattern: " + mine[0].message) if ok else (
            f"expected an error this entry recognizes; got: {shown}")
    elif expect == "warn":
        ok = compiled and bool(mine)
        detail = ("compiles with its own warning: " + mine[0].message) if ok else (
            f"expected a warning this entry recognizes; got: {shown}")
    else:  # compile
        ok = compiled and not warnings
        detail = "compiles clean" if ok else f"expected a clean compile; got: {shown}"
    return SnippetOutcome(entry.id, side, expect, ok, compiled, detail, result.seconds, diags)


# -- batching -------------------------------------------------------------------------------------
# Each check compile re-parses cute/tensor.hpp (2-3 s on 2 cores), so snippets that the front end judges
# (errors from EDG) or that must compile clean are checked many per translation unit: each snippet in a
# namespace of its own, its diagnostics found by its line range. A batch that does not give every snippet
# a verdict (an error that stops the compiler, a diagnostic the condenser merged away) falls back to one
# compile per snippet, so a verdict never depends on batching.

@dataclass
class _Item:
    entry: Entry
    side: str
    expect: str
    code: str
    arch: str | None
    first: int = 0  # 1-based line range of the snippet in the batch TU
    last: int = 0


def _items(kb: KnowledgeBase, entries: list[Entry]) -> list[_Item]:
    items = []
    for e in entries:
        for side, code in (("before", e.fix_before), ("after", e.fix_after)):
            if code.strip():
                expect = e.before_expect if side == "before" else e.after_expect
                arch = e.after_arch if side == "after" and e.after_arch else e.arch
                items.append(_Item(e, side, expect, code, arch))
    return items


def _batchable(item: _Item) -> bool:
    # Warnings come from ptxas / the PTX scan, which attribute by kernel or by source text, not by line:
    # only front-end errors and clean compiles batch.
    return not item.entry.standalone and item.expect in ("fail", "compile") and "#error" not in item.code


def check_all(kb: KnowledgeBase, entries: list[Entry], builders: dict, state_dir: Path,
              batch: bool = True) -> list[SnippetOutcome]:
    from cutegen.compile import Tier

    items = _items(kb, entries)
    outcomes: dict[tuple[str, str], SnippetOutcome] = {}
    if batch:
        groups: dict[tuple[str, str | None, str], list[_Item]] = {}
        for it in items:
            if _batchable(it):
                groups.setdefault((it.entry.context, it.arch, it.expect), []).append(it)
        for (context, arch, expect), group in groups.items():
            if len(group) < 2:
                continue
            text = _batch_text(kb.contexts[context], group)
            builder = _arch_builder(builders, arch, state_dir)
            virtual = kb.root / "snippets" / f"batch-{context}-{arch or 'default'}-{expect}.cu"
            result = builder.run(Tier.CHECK, virtual, text=text)
            for it in group:
                o = _judge_in_batch(kb, it, result, len(group))
                if o is not None:
                    outcomes[(it.entry.id, it.side)] = o
    for it in items:
        if (it.entry.id, it.side) in outcomes:
            continue
        builder = _arch_builder(builders, it.arch, state_dir)
        virtual = kb.root / "snippets" / f"{it.entry.id}.{it.side}.cu"
        from cutegen.knowledge.loader import snippet_source

        result = builder.run(Tier.CHECK, virtual, text=snippet_source(kb.contexts[it.entry.context], it.code))
        outcomes[(it.entry.id, it.side)] = judge(kb, it.entry, it.side, it.expect, result)
    return [outcomes[(it.entry.id, it.side)] for it in items]


def _batch_text(context: str, group: list[_Item]) -> str:
    from cutegen.knowledge.loader import SNIPPET_MARK

    head, _, tail = context.partition(SNIPPET_MARK)
    lines = head.splitlines()
    for it in group:
        ns = "kb_" + it.entry.id.replace("-", "_") + "_" + it.side
        lines.append(f"namespace {ns} {{")
        it.first = len(lines) + 1
        lines += it.code.rstrip("\n").splitlines()
        it.last = len(lines)
        lines.append(f"}}  // namespace {ns}")
    return "\n".join(lines) + "\n" + tail


def _judge_in_batch(kb: KnowledgeBase, it: _Item, result: CheckResult, n: int) -> SnippetOutcome | None:
    def inside(d) -> bool:
        return any(it.first <= line <= it.last for line in [d.line, *[r.line for r in d.related if r.file == d.file]])

    if it.expect == "compile":
        if result.ok and not [d for d in result.diagnostics if d.severity is not Severity.INFO]:
            return SnippetOutcome(it.entry.id, it.side, it.expect, True, True,
                                  f"compiles clean (checked in a batch of {n})", result.seconds / n)
        return None  # something in the batch is not clean: judge each alone
    mine = [d for d in result.errors if inside(d) and kb.recognizes(it.entry.id, diagnostic=d)]
    if not mine:
        return None
    return SnippetOutcome(it.entry.id, it.side, it.expect, True, False,
                          f"fails with its own pattern (batch of {n}): {mine[0].message}", result.seconds / n,
                          [d.to_json() for d in mine])
