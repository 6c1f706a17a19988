"""Trees of versions the tests of "best" share (agent/tree.py), grown with the tree's own API from the judge's own
Verifications (`candidates._compare`, as the GPU path makes them), judged by an objective."""

from __future__ import annotations

from pathlib import Path

from cutegen.agent.candidates import CandidateVerdict, Verification, _compare
from cutegen.agent.search import ratio_of
from cutegen.agent.tree import VersionTree

TEXT = """#include <cutegen/abi.h>

__global__ void k(float* y) {{
  int i = threadIdx.x;
  y[i] = {value};
}}
"""
START = TEXT.format(value="0.5f")
# each change: (its text, ms/call, J/call) against the start's 6 ms and 100 mJ. By time A is best (2×), by
# energy B (2.5×), by energy × delay C (3×: 1.5× faster and 2× less energy).
CHANGES = {"A: vectorize": (TEXT.format(value="1.0f * 0.5f"), 3.0, 0.090),
           "B: cheaper math": (TEXT.format(value="0.5f + 0.0f"), 5.4, 0.040),
           "C: grid shape": (TEXT.format(value="0.5f * 1.0f"), 4.0, 0.050)}
BEST = {"time": "A: vectorize", "energy": "B: cheaper math", "edp": "C: grid shape"}


def figures(ms: float, joules: float) -> dict:
    return {"median_ms": ms, "spread": 0.01, "j_per_call": joules, "energy_spread": 0.01}


def judged(before: dict, after: dict, objective: str) -> Verification:
    """What the judge returns for a correct candidate timed and measured against its parent."""
    return _compare(dict(before), dict(after), "correct on 5 trials", ["check", "build", "test", "time"], None,
                    objective)


def searched(state_dir: Path, kernel: Path, objective: str | None) -> VersionTree:
    """The start and its three changes, each judged against it by `objective`, as a search by it leaves the tree
    (None: a tree from before searches named their objective, judged by time)."""
    tree = VersionTree(state_dir, kernel)
    start = figures(6.0, 0.100)
    root = tree.root(START, start, "compiles · 6.000 ms", "verified", None)
    tree.searches.append({"shape": "beam:1x3", "root": root.id, **({"objective": objective} if objective else {})})
    for change, (text, ms, joules) in CHANGES.items():
        v = judged(start, figures(ms, joules), objective or "time")
        tree.add(root, text, change, ok=v.ok, verdict=str(v.verdict), label=v.label, figures=v.figures,
                 ratio=ratio_of(v), record=None, step=1)
    return tree


def untimed(state_dir: Path, kernel: Path) -> VersionTree:
    """A search without a GPU: the start and two changes that compiled and built, none of them timed."""
    tree = VersionTree(state_dir, kernel)
    root = tree.root(START, {"gpu": False}, "compiled and built · not run: no GPU on this machine", "verified", None)
    tree.searches.append({"shape": "beam:1x2", "objective": "time", "root": root.id})
    for change, (text, _, _) in list(CHANGES.items())[:2]:
        v = Verification(True, CandidateVerdict.VERIFIED, "compiled and built · not run: no GPU on this machine",
                         "compiled, not run", figures={"gpu": False}, tiers=["check", "build"])
        tree.add(root, text, change, ok=v.ok, verdict=str(v.verdict), label=v.label, figures=v.figures,
                 ratio=ratio_of(v), record=None, step=1)
    return tree


def search_figures(state_dir: Path, kernel: Path, objective: str | None) -> dict:
    """The figures of the proposal an editor's Optimize search offers (agent/search.py `proposal_label`, with what
    Agent.search adds), for the tree `searched` grows by `objective`, or the `untimed` one (objective None). The
    best is the search's own choice: a child of the start needs no direct comparison; untimed, the first verified."""
    from cutegen.agent.search import SearchResult, Stats, proposal_label

    tree = searched(state_dir, kernel, objective) if objective else untimed(state_dir, kernel)
    root = tree.nodes[tree.searches[-1]["root"]]
    best = tree.best() if objective else next(n for n in tree.ranked() if n.parent)
    n = len(tree.nodes) - 1
    stats = Stats(candidates=n, judged=n if objective else 0, verified=n, judge_s=12.5 if objective else 0.0,
                  wall_s=40.25, steps=1, stop="1 step(s) done")
    _, figures = proposal_label(SearchResult(tree, root, best, None, stats), kernel.name)
    return {**figures, "workload": "elementwise", "shape": "beam:1x3" if objective else "beam:1x2"}
