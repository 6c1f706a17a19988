"""KnowledgeBase: the one object the language server (hover diagnoses) and the agent (prompts) use."""

from __future__ import annotations

import threading
from pathlib import Path

from cutegen.knowledge.loader import RawKnowledge, Signal, knowledge_root, load_raw, snippet_source
from cutegen.knowledge.retrieval import BM25_MAX, Hit, Index, diagnostic_dict, exact_evidence, query_text
from cutegen.knowledge.schema import Entry, SIGNALS, WORKLOADS, validate

_CACHE: dict[str, "KnowledgeBase"] = {}
_LOCK = threading.Lock()


class KnowledgeBase:
    def __init__(self, raw: RawKnowledge):
        self.root = raw.root
        self.entries: list[Entry] = raw.entries
        self.by_id: dict[str, Entry] = {e.id: e for e in raw.entries}
        self.contexts = raw.contexts
        self.signals: dict[str, Signal] = raw.signals
        self._index = Index(self.entries)
        self._signatures: dict[str, str | None] = {}

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def load(cls, root: str | Path | None = None, *, reload: bool = False) -> "KnowledgeBase":
        """The knowledge base at `root` (default: $CUTEGEN_KNOWLEDGE, the checkout's cute_knowledge/, or
        the wheel's share/cutegen/cute_knowledge), parsed once per process."""
        path = knowledge_root(root)
        key = str(path)
        with _LOCK:
            if reload or key not in _CACHE:
                _CACHE[key] = cls(load_raw(path))
            return _CACHE[key]

    def problems(self) -> list[str]:
        """Schema problems of the whole base (empty when valid)."""
        ids = set(self.by_id)
        out: list[str] = []
        if len(ids) != len(self.entries):
            seen: set[str] = set()
            for e in self.entries:
                if e.id in seen:
                    out.append(f"{e.path}: duplicate id {e.id!r}")
                seen.add(e.id)
        for e in self.entries:
            out += validate(e, ids, set(self.contexts))
        for name in SIGNALS:
            if name not in self.signals:
                out.append(f"signals.yaml: profiler signal {name!r} has no advice")
        for name, s in self.signals.items():
            if name not in SIGNALS:
                out.append(f"signals.yaml: {name!r} is not a profiler signal")
            if not s.meaning:
                out.append(f"signals.yaml: {name!r} has no meaning")
            if not s.advice:
                out.append(f"signals.yaml: {name!r} has no advice")
            for a in s.advice:
                if a not in ids:
                    out.append(f"signals.yaml: {name!r} advises unknown entry {a!r}")
        out += self._stall_problems()
        for w in WORKLOADS:
            if not self.menu(w):
                out.append(f"no optimization menu for workload {w!r}")
        return out

    # -- retrieval ------------------------------------------------------------------------------

    def search(self, *, diagnostic=None, mismatch: dict | None = None, verdict: str | None = None,
               signals: list[dict] | None = None, source: str | None = None, k: int = 3,
               message: str | None = None, kinds: tuple[str, ...] | None = None, exact: bool = True) -> list[Hit]:
        """The top `k` entries for what went wrong, best first.

        diagnostic: a cutegen.model.Diagnostic or its to_json() dict; mismatch: {'pattern', 'message'} from
        the harness; verdict: the harness's verdict name; message: the run record's message (for cuda-error,
        launch-error, ...); signals: [{'name', 'evidence'}] from the profiler; source: the kernel's text.
        kinds: restrict to these entry kinds (default: errors for a diagnostic/verdict/mismatch, else all).
        exact=False ranks by BM25 alone (an ablation for the benchmark).
        """
        diag = diagnostic_dict(diagnostic)
        signals = [s if isinstance(s, dict) else {"name": str(s)} for s in (signals or [])]
        if kinds is None:
            kinds = ("error",) if (diag or mismatch or verdict) else ("error", "idiom", "optimization")
        text = query_text(diag=diag, mismatch=mismatch, verdict=verdict, signals=signals, source=source,
                          run_message=message)
        bm = self._index.bm25(text)
        candidates = [(i, e) for i, e in enumerate(self.entries) if e.kind in kinds]
        top = max((bm[i] for i, _ in candidates), default=0.0)
        hits = []
        for i, e in candidates:
            points, why = exact_evidence(e, diag=diag, mismatch=mismatch, verdict=verdict, signals=signals,
                                         source=source, run_message=message) if exact else (0.0, [])
            text_points = BM25_MAX * bm[i] / top if top > 0 else 0.0
            score = points + text_points
            if score <= 0:
                continue
            reason = ("exact: " + ", ".join(why) + "; " if why else "") + f"bm25 {text_points / BM25_MAX:.2f}"
            hits.append(Hit(e, score, reason))
        hits.sort(key=lambda h: (-h.score, h.entry.id))
        return hits[:k]

    def recognizes(self, entry_id: str, **query) -> bool:
        """True when the entry's own recognizer matches the query exactly (tests, tooling)."""
        e = self.by_id[entry_id]
        diag = diagnostic_dict(query.get("diagnostic"))
        points, _ = exact_evidence(e, diag=diag, mismatch=query.get("mismatch"), verdict=query.get("verdict"),
                                   signals=query.get("signals") or [], source=query.get("source"),
                                   run_message=query.get("message"))
        return points > 0

    # -- presentation ---------------------------------------------------------------------------

    def diagnosis_markdown(self, hit: Hit | Entry, *, max_chars: int = 1800) -> str:
        """Short Markdown for a hover: what CuTe wanted, the fix as a before/after pair, related entries."""
        e = hit.entry if isinstance(hit, Hit) else hit
        md = [f"**{e.title}**"]  # hit.why is retrieval's debug trace: transcripts keep it, users don't need it
        body = e.explanation.split("\n## ")[0].strip()
        if len(body) > max_chars // 2:
            body = body[: max_chars // 2].rsplit("\n\n", 1)[0] + " …"
        md.append(body)
        if e.fix_before and e.fix_after:
            md.append("Before:\n```cpp\n" + _short_code(e.fix_before) + "```")
            md.append("After:\n```cpp\n" + _short_code(e.fix_after) + "```")
        if e.related:
            names = [f"{self.by_id[r].title} (`{r}`)" for r in e.related if r in self.by_id]
            md.append("Related: " + "; ".join(names[:4]))
        md.append(f"`{e.id}` · cute_knowledge/{e.path}")
        return "\n\n".join(md)

    def menu(self, workload: str) -> list[Entry]:
        """The optimization menu for 'elementwise' | 'reduction' | 'gemm' | 'other', in menu order."""
        items = [e for e in self.entries if e.kind == "optimization" and e.workload == workload]
        return sorted(items, key=lambda e: (e.order, e.id))

    def idioms(self, workload: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.kind == "idiom" and (workload is None or e.workload == workload)]

    def _stall_problems(self) -> list[str]:
        from cutegen.profiler.stalls import MEANINGS

        out: list[str] = []
        seen: dict[str, str] = {}
        for name, s in self.signals.items():
            for reason, advice in s.stalls.items():
                if reason not in MEANINGS:
                    out.append(f"signals.yaml: {name!r} advises on {reason!r}, not a profiler stall reason")
                if not advice:
                    out.append(f"signals.yaml: {name!r} has no advice for stall {reason!r}")
                if reason in seen:
                    out.append(f"signals.yaml: stall {reason!r} is advised by both {seen[reason]!r} and {name!r}")
                seen[reason] = name
        out += [f"signals.yaml: stall reason {r!r} has no advice" for r in MEANINGS if r not in seen]
        return out

    def advice_for_stall(self, reason: str) -> tuple[str, str] | None:
        """(the signal it belongs to, the advice) for a hot line's stall reason, or None."""
        for name, s in self.signals.items():
            if reason in s.stalls:
                return name, s.stalls[reason]
        return None

    def advice_for_signal(self, name: str) -> list[Entry]:
        """Catalog and menu entries for one profiler signal, best first."""
        s = self.signals.get(name)
        ids = list(s.advice) if s else []
        for e in self.entries:  # menu items that name the signal but are not listed yet
            if name in e.signals and e.id not in ids:
                ids.append(e.id)
        return [self.by_id[i] for i in ids if i in self.by_id]

    def api_signature(self, name: str) -> str | None:
        """The declaration(s) of a CuTe function in the installed CUTLASS headers, e.g. 'make_tiled_copy'."""
        if name not in self._signatures:
            from cutegen.knowledge.headers import signature
            from cutegen.toolchain import ToolchainError, find_cutlass_include

            try:
                include = find_cutlass_include(None)
            except ToolchainError:
                return None
            self._signatures[name] = signature(include, name)
        return self._signatures[name]

    # -- snippets -------------------------------------------------------------------------------

    def snippet_sources(self, entry: Entry) -> dict[str, str]:
        """{'before': TU text, 'after': TU text} for the entry's fix pair (only those it has)."""
        out: dict[str, str] = {}
        ctx = self.contexts.get(entry.context)
        if ctx is None:
            return out
        for side, code in (("before", entry.fix_before), ("after", entry.fix_after)):
            if code.strip():
                out[side] = snippet_source(ctx, code)
        return out


def _short_code(code: str, lines: int = 14) -> str:
    rows = code.rstrip("\n").splitlines()
    if len(rows) > lines:
        rows = rows[:lines] + ["// …"]
    return "\n".join(rows) + "\n"
