"""The agent's view of the knowledge base and the profiler, both optional parts of a build.

They are written separately; every call here degrades plainly (no retrieval, no menu, no profile)
when the package is missing or fails, and says why in `problems`, so a broken knowledge base can
cost a hint but never an answer.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from cutegen.model import Diagnostic
from cutegen.profiler.signals import ProfileVerdict

if TYPE_CHECKING:
    from cutegen.records import RunRecord

log = logging.getLogger(__name__)

# CuTeGen's own menus (the paper's), used only when the knowledge base has none.
FALLBACK_MENUS = {
    "elementwise": ["128-bit vectorized loads/stores (float4 / uint128_t copy atom)", "grid-stride loop",
                    "larger block size / more work per thread", "tail handling without a scalar slow path",
                    "fast-math intrinsics where the tolerance allows", "fusing neighbouring operations"],
    "reduction": ["warp shuffles instead of shared-memory trees", "vectorized loads", "one pass (online) "
                  "instead of two", "more rows per CTA / better occupancy"],
    "gemm": ["CTA/warp/thread tile sizes", "tensor-core MMA atoms", "shared-memory swizzle",
             "cp.async / TMA pipelining (more stages)", "split-K for skinny shapes"],
    "other": ["memory coalescing", "vectorized accesses", "occupancy (block size, registers)"],
}


class Knowledge:
    def __init__(self):
        self.problems: list[str] = []
        self._kb = None
        try:
            from cutegen.knowledge import KnowledgeBase

            self._kb = KnowledgeBase.load()
        except ImportError:
            self.problems.append("no knowledge base in this build (no retrieval)")
        except Exception as e:  # a broken data file must not stop the agent
            self.problems.append(f"the knowledge base failed to load ({type(e).__name__}: {e})")

    @property
    def available(self) -> bool:
        return self._kb is not None

    def search(self, *, diagnostic: Diagnostic | None = None, mismatch: dict | None = None, verdict: str | None = None,
               signals: list | None = None, source: str = "", k: int = 3) -> list:
        if self._kb is None:
            return []
        try:
            hits = list(self._kb.search(diagnostic=diagnostic, mismatch=mismatch, verdict=verdict, signals=signals,
                                        source=source, k=k))
        except Exception as e:
            self.problems.append(f"retrieval failed ({type(e).__name__}: {e})")
            return []
        # Why each entry ranked ("exact: root /…/; bm25 0.91") is a debugging trace: the log, never user text.
        log.debug("retrieval: %s", [h.to_json() for h in hits if hasattr(h, "to_json")])
        return hits

    def query(self, text: str, k: int = 3) -> list:
        """Entries for a free-text question (a tool call's query), best first."""
        if self._kb is None or not text.strip():
            return []
        try:
            return list(self._kb.search(message=text, source=text, k=k))
        except Exception as e:
            self.problems.append(f"retrieval failed ({type(e).__name__}: {e})")
            return []

    def diagnosis_markdown(self, hit) -> str | None:
        try:
            return self._kb.diagnosis_markdown(hit) if self._kb is not None else None
        except Exception as e:
            self.problems.append(f"the knowledge base's diagnosis failed ({type(e).__name__}: {e})")
            return None

    def menu(self, workload: str) -> list:
        if self._kb is not None:
            try:
                items = list(self._kb.menu(workload))
                if items:
                    return items
            except Exception as e:
                self.problems.append(f"no menu for {workload} ({type(e).__name__}: {e})")
        return list(FALLBACK_MENUS.get(workload, FALLBACK_MENUS["other"]))


def hit_text(hit) -> str:
    """A retrieved entry as prompt text: title, explanation, the fix as before/after."""
    e = getattr(hit, "entry", hit)
    parts = [f"### {getattr(e, 'title', 'entry')}", str(getattr(e, "explanation", "") or "")[:1200]]
    before, after = getattr(e, "fix_before", None), getattr(e, "fix_after", None)
    if before or after:
        parts.append(f"Before:\n```cuda\n{before or ''}\n```\nAfter:\n```cuda\n{after or ''}\n```")
    return "\n".join(p for p in parts if p)


def menu_text(item) -> str:
    if isinstance(item, str):
        return f"- {item}"
    parts = [f"- **{getattr(item, 'title', item)}**"]
    for label, attr in (("when", "preconditions"), ("effect", "expected_effect"), ("signals", "signals"),
                        ("verify", "verify")):
        value = getattr(item, attr, None)
        if value:
            parts.append(f"{label}: {', '.join(map(str, value)) if isinstance(value, (list, tuple)) else value}")
    return " — ".join(parts)


def profile(kernel: Path, builder, worker, *, problem: Path | None, state_dir: Path,
            jail=None) -> tuple[RunRecord | None, str | None]:
    """(profile record, None) or (None, why there is none). `jail`: ncu and the profiled program run inside it
    (model-written text)."""
    try:
        from cutegen.profiler import profile_kernel
    except ImportError:
        return None, "no profiler in this build"
    try:
        record = profile_kernel(kernel, builder, worker, problem=problem, state_dir=state_dir, jail=jail)
    except Exception as e:
        return None, f"the profiler failed ({type(e).__name__}: {e})"
    if record.verdict != ProfileVerdict.PROFILED:
        return None, record.message or record.verdict
    return record, None


_GEMM = re.compile(r"\b(matmul|bmm|mm|einsum|linear|conv\w*)\b|@|\bgemm\b|\bmma\b|wgmma|TiledMMA", re.I)
_REDUCE = re.compile(r"\b(sum|mean|softmax|log_softmax|norm|layer_norm|rms_norm|max|min|argmax|argmin|cumsum|"
                     r"var|std|prod|logsumexp)\s*\(", re.I)


def classify_workload(problem_source: str, kernel_text: str) -> str:
    """'gemm', 'reduction', 'elementwise' or 'other', from the reference's forward (else the kernel)."""
    forward = problem_source
    m = re.search(r"def forward\([^)]*\)[^:\n]*:(.*?)(?=\n\S|\Z)", problem_source, re.S)
    if m:  # the body, without docstrings and comments (their words are not operations)
        forward = re.sub(r'(\"\"\"|\'\'\').*?\1|#[^\n]*', "", m.group(1), flags=re.S)
    text = forward if forward.strip() else kernel_text
    if _GEMM.search(text):
        return "gemm"
    if _REDUCE.search(text) or re.search(r"dim\s*=", text):
        return "reduction"
    if forward.strip():
        return "elementwise"
    return "other"
