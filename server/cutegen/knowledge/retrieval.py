"""Retrieval: exact pattern matches first (recognizers on the condensed diagnostic, the harness's verdict
and mismatch pattern, profiler signals, kernel source), BM25 (`bm25s`) over the entries' text for the rest.

Score = the exact points an entry's recognizer earns + up to 3 BM25 points (the query's BM25 scores
scaled so the best entry gets 3). A recognizer match therefore always outranks text similarity alone,
and BM25 orders entries with equal exact evidence (and finds something when nothing matches exactly).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from cutegen.knowledge.schema import Entry

# Points for each kind of exact evidence.
ROOT_MATCH = 10.0  # a root regex on the diagnostic's root/message (with its code, if the entry names codes)
CODE_ONLY = 8.0  # the diagnostic code, for entries whose code says it all (ptxas-spill, cute-arch-trap)
HEADER_MATCH = 2.0
API_MATCH = 1.0
MISMATCH_MATCH = 10.0
VERDICT_MATCH = 6.0
MESSAGE_MATCH = 3.0
SIGNAL_MATCH = 4.0
SOURCE_MATCH = 4.0  # a source pattern is more specific than the wording of a verdict
BM25_MAX = 3.0

_STOP = set("""a an and are as at be by can for from has have if in into is it its not of on or that the this
to was with without which while will you your do does than then there these they when where what who how
cute cutlass""".split())
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def tokenize(text: str) -> list[str]:
    """Identifiers whole and in parts: 'partition_fragment_A' → partition_fragment_a, partition, fragment;
    'CopyAtom' → copyatom, copy, atom. Numbers, one-letter parts and stop words are dropped."""
    out: list[str] = []
    for w in _WORD.findall(text):
        if w.isdigit():
            continue
        lw = w.lower()
        parts = [p for chunk in w.split("_") for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", chunk)]
        parts = [p.lower() for p in parts if len(p) > 1 and not p.isdigit()]
        if len(lw) > 1 and lw not in _STOP:
            out.append(lw)
        if len(parts) > 1:
            out += [p for p in parts if p not in _STOP and p != lw]
    return out


@dataclass
class Hit:
    entry: Entry
    score: float
    why: str  # "exact: root /CopyAtom rank-mismatch/, code cute-static-assert; bm25 0.91" or "bm25 0.42"

    def to_json(self) -> dict:
        return {"id": self.entry.id, "kind": self.entry.kind, "title": self.entry.title, "score": round(self.score, 3),
                "why": self.why}


class Index:
    def __init__(self, entries: list[Entry]):
        bm25s = _import_bm25s()
        self.entries = entries
        self._bm25 = bm25s.BM25()
        corpus = [tokenize(e.text) or ["empty"] for e in entries]
        self._bm25.index(corpus, show_progress=False)

    def bm25(self, query: str) -> list[float]:
        tokens = tokenize(query)
        if not tokens:
            return [0.0] * len(self.entries)
        return [float(s) for s in self._bm25.get_scores(tokens)]


def _import_bm25s():
    """bm25s imports jax where it is installed, for a top-k this index never asks for (it reads every score), and
    that import runs a jax op: jax then claims 75 % of the GPU's memory in this process (seen on the H200: XLA's
    "Failed to allocate 104.85GiB" in the agent while the worker held the card). So jax is hidden while bm25s
    imports; bm25s then takes numpy, as it does where jax is absent."""
    hidden = "jax" not in sys.modules
    if hidden:
        sys.modules["jax"] = None  # `import jax.lax` then raises ImportError
    try:
        import bm25s
    finally:
        if hidden and sys.modules.get("jax", 0) is None:
            del sys.modules["jax"]
    return bm25s


def diagnostic_dict(diagnostic) -> dict:
    if diagnostic is None:
        return {}
    if hasattr(diagnostic, "to_json"):
        return diagnostic.to_json()
    return dict(diagnostic)


def strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def exact_evidence(entry: Entry, *, diag: dict, mismatch: dict | None, verdict: str | None, signals: list[dict],
                   source: str | None, run_message: str | None = None) -> tuple[float, list[str]]:
    """The exact points an entry earns for this query, and what earned them."""
    rec = entry.recognize
    points, why = 0.0, []
    if diag:
        code = str(diag.get("code", ""))
        data = diag.get("data") or {}
        text = f"{diag.get('root', '')}\n{diag.get('message', '')}"
        header = str(data.get("header") or "")
        code_ok = not rec.codes or code in rec.codes
        root_hit = next((rx for rx in rec.root if re.search(rx, text)), None)
        header_ok = not rec.header or any(h in header for h in rec.header)
        if code_ok and root_hit and header_ok:
            points += ROOT_MATCH
            why.append(f"root /{root_hit}/")
            if rec.header:
                points += HEADER_MATCH
                why.append(f"header {header}")
        elif code_ok and rec.codes and not rec.root and header_ok:
            points += CODE_ONLY
            why.append(f"code {code}")
        elif code_ok and root_hit and not header_ok:
            points += ROOT_MATCH / 2  # the right words from another header: a weaker match
            why.append(f"root /{root_hit}/ (other header)")
        if points and rec.api and data.get("api") in rec.api:
            points += API_MATCH
            why.append(f"api {data.get('api')}")
    mm_message = ""
    if mismatch:
        pattern = str(mismatch.get("pattern", ""))
        mm_message = str(mismatch.get("message", ""))
        if pattern and pattern in rec.mismatch:
            points += MISMATCH_MATCH
            why.append(f"mismatch pattern {pattern}")
    if verdict and verdict in rec.verdicts:
        # A mismatch verdict says little by itself; its pattern (above) is the evidence.
        if not (verdict == "mismatch" and mismatch and rec.mismatch):
            points += VERDICT_MATCH
            why.append(f"verdict {verdict}")
    if rec.message and not any(w.startswith("mismatch pattern") for w in why):
        # The message is evidence only where the pattern is not (never count the same fact twice).
        text = f"{mm_message}\n{run_message or ''}"
        hit = next((rx for rx in rec.message if re.search(rx, text, re.I)), None)
        if hit:
            points += MESSAGE_MATCH
            why.append(f"message /{hit}/")
    for s in signals:
        if s.get("name") in rec.signals or s.get("name") in entry.signals:
            points += SIGNAL_MATCH
            why.append(f"signal {s.get('name')}")
    if source and rec.source:
        clean = strip_comments(source)
        hit = next((rx for rx in rec.source if re.search(rx, clean)), None)
        if hit:
            points += SOURCE_MATCH
            why.append(f"source /{hit}/")
    return points, why


def query_text(*, diag: dict, mismatch: dict | None, verdict: str | None, signals: list[dict],
               source: str | None, run_message: str | None = None) -> str:
    parts = []
    if diag:
        data = diag.get("data") or {}
        parts += [str(diag.get("root", "")), str(diag.get("message", "")), str(diag.get("code", "")),
                  str(data.get("api", "")), str(data.get("header_comment", ""))]
    if mismatch:
        parts += [str(mismatch.get("pattern", "")), str(mismatch.get("message", ""))]
    if verdict:
        parts.append(verdict.replace("-", " "))
    if run_message:
        parts.append(run_message)
    for s in signals:
        parts += [str(s.get("name", "")).replace("-", " "), str(s.get("evidence", ""))]
    if source and not parts:
        # Source alone: the CuTe names it uses (atoms, algorithms), not its whole text.
        names = re.findall(r"\b(?:SM\d+_\w+|make_\w+|partition_\w+|local_\w+|cp_async\w*|Swizzle|tile_to_shape|"
                           r"warpgroup_\w+|TMA|GMMA|ldmatrix|LDSM\w*|UniversalCopy|copy_if|gemm|copy|"
                           r"__syncthreads|__shfl_xor_sync)\b", strip_comments(source))
        parts.append(" ".join(dict.fromkeys(names)))
    return "\n".join(parts)
