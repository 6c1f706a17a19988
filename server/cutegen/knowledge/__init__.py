"""The knowledge base (`cute_knowledge/`): error catalog, idioms, optimization menus, signal → advice map,
and retrieval over them (exact recognizers + BM25), plus CuTe API signatures from the installed headers.

    from cutegen.knowledge import KnowledgeBase, Hit
    kb = KnowledgeBase.load()
    hits = kb.search(diagnostic=d, k=3)        # d: cutegen.model.Diagnostic or its to_json() dict
    kb.diagnosis_markdown(hits[0])             # hover text
"""

from cutegen.knowledge.base import KnowledgeBase
from cutegen.knowledge.loader import ENV, KnowledgeError, knowledge_root
from cutegen.knowledge.retrieval import Hit
from cutegen.knowledge.schema import MISMATCH_PATTERNS, SIGNALS, VERDICTS, WORKLOADS, Entry

__all__ = ["KnowledgeBase", "Hit", "Entry", "KnowledgeError", "knowledge_root", "ENV", "SIGNALS", "WORKLOADS",
           "VERDICTS", "MISMATCH_PATTERNS"]
