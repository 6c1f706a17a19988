"""Hover: over a diagnostic, its explanation and related places; over a kernel name, its latest runs; on a hot
line of a line profile, its stall reasons (profile_lens.py).

Both answer from memory or small JSON files: a hover never compiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.lsp import kernels, layouts, profile_lens, runs
from cutegen.lsp.convert import contains
from cutegen.lsp.documents import path_of, uri_of, word_at
from cutegen.model import Diagnostic

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer


KB_EXACT = 10.0  # knowledge-base scores above this come from an exact pattern match, not just BM25


def diagnostic_markdown(d: Diagnostic) -> str:
    """The explanation (to which the agent's diagnose command appends its diagnosis), then the knowledge
    base's entry unless that diagnosis already came from it."""
    parts = [compact(d.explanation) if d.explanation else f"**{d.root or d.message}**"]
    known = None if "**Knowledge base diagnosis**" in d.explanation else knowledge_diagnosis(d)
    if known:
        parts.append(known)
    if d.related:
        links = [f"- [{_short(r.file)}:{r.line}]({uri_of(r.file)}#L{r.line}) — {r.message}" for r in d.related]
        parts.append("Related:\n" + "\n".join(links))
    parts.append(f"`{d.code}` · {d.source}")
    return "\n\n".join(parts)


def compact(markdown: str) -> str:
    """The explanation in as few lines as it reads: list items as one tight list, short sentences as the lines of
    one paragraph. Each blank line is a paragraph gap in the editor's hover, which is only so tall: with one gap
    per binding, VS Code cut the explanation after the first binding."""
    groups: list[tuple[str, list[str]]] = []
    for block in (b.strip() for b in markdown.split("\n\n")):
        if not block:
            continue
        kind = "list" if block.startswith("- ") else "line" if "\n" not in block and len(block) <= 160 else "block"
        if groups and kind != "block" and groups[-1][0] == kind:
            groups[-1][1].append(block)
        else:
            groups.append((kind, [block]))
    return "\n\n".join(("\n" if kind == "list" else "  \n").join(blocks) for kind, blocks in groups)


def knowledge_diagnosis(d: Diagnostic) -> str | None:
    """The knowledge base's entry for this diagnostic, when a pattern matches exactly (BM25 alone can be wrong)."""
    try:
        from cutegen.knowledge import KnowledgeBase
    except ImportError:
        return None
    kb = KnowledgeBase.load()
    hits = kb.search(diagnostic=d, k=1)
    if not hits or hits[0].score <= KB_EXACT:
        return None
    return kb.diagnosis_markdown(hits[0])


def warm_knowledge() -> None:
    """Load the knowledge base ahead of the first hover (0.3 s of YAML and an index), off the event loop."""
    try:
        from cutegen.knowledge import KnowledgeBase
    except ImportError:
        return
    KnowledgeBase.load()


def kernel_markdown(ls: CuteGenServer, path: Path, anchor: kernels.Anchor) -> str:
    what = "launcher (C ABI entry point)" if anchor.kind == "launcher" else "kernel"
    result = ls.session.latest_check(path)
    kernel = anchor.name if anchor.kind == "kernel" else None
    lines = [f"**`{anchor.name}`** — {what}", f"Last check: {runs.resources_title(result, kernel)}"]
    state = ls.session.state_dir(path)
    found = runs.latest(state, str(path))
    shown = ls.loop.hover_lines(uri_of(path), path)  # the figures marked running… or stale (lsp/background.py)
    for kind in runs.RUN_KINDS:
        record = found.get(kind)
        if record is None:
            lines.append(f"- **{kind}**: {shown.get(kind, 'no run yet')}")
            continue
        link = f" — [record]({uri_of(record.path)})" if record.path else ""
        lines.append(f"- **{kind}**: {shown.get(kind, record.summary())} ({runs.age(record)}){link}")
        if record.message and not record.note:
            lines.append(f"  {record.message}")
        if (energy := record.energy_text()) and not record.note:
            lines.append(f"  {energy}")
    if "regression" in shown:
        lines.append(f"- {shown['regression']}")
    return "\n\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:])


def _short(file: str) -> str:
    """'/…/include/cute/tensor_impl.hpp' → 'cute/tensor_impl.hpp'; user files by name."""
    parts = Path(file).parts
    if "include" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("include"):])
    return Path(file).name


def _markdown(value: str, at: types.Range | None) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value), range=at)


def register(server: CuteGenServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: CuteGenServer, params: types.HoverParams) -> types.Hover | None:
        uri, pos = params.text_document.uri, params.position
        hits = [(lsp, d) for lsp, d in ls.published.at(uri) if contains(lsp.range, pos)]
        if hits:
            return _markdown("\n\n---\n\n".join(diagnostic_markdown(d) for _, d in hits), hits[0][0].range)
        doc, path = ls.open_document(uri), path_of(uri)
        if doc is None or path is None:
            return None
        word = word_at(doc.source.splitlines(), pos.line, pos.character)
        for anchor in kernels.anchors(doc.source):
            if anchor.name == word:
                return _markdown(kernel_markdown(ls, path, anchor), None)
        texts = [profile_lens.hover_markdown(ls, uri, pos.line, doc.source), layouts.layout_hover(ls, uri, pos, doc.source)]
        text = "\n\n---\n\n".join(t for t in texts if t)
        return _markdown(text, None) if text else None
