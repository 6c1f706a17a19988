"""The tree of versions of one kernel that optimization searches grow, under `.cutegen/agent/<kernel>/tree.json`
beside the texts (`versions/<id>.cu`, shared with history.py: a version's id is its text's digest).

A node is a version the judge saw: its parent, the change that made it (the menu item it was asked for), the
verdict, the one-line label, the figures (median, spread, speedup against its parent) and where its run record is.
Only `ok` nodes (verified better than their parent, or a start) are expanded. The tree also keeps the search's memory:
every candidate that did not join as a better version (the edit rejected, a build error, a wrong result, slower,
within noise), by the node it was made from, so a later step or a later search does not ask for it again.

"Best" is by the objective the tree was searched with (`objective`: time, energy or edp, agent/objective.py;
time for a tree that names none). `gain_by` is a version's ratio by that figure against one start for the whole
line of versions it is on (the latest search's start there: versions two searches made from different starts
compare through the path between them, not as ratios against two different starts); `best` is the one answer to
"which version is best" that the CLI, the editor (CodeLens, quick fix, Versions view, Restore Best) and the search
itself use. A version without the figure (not timed, no energy measured) is never best.

The tree is the user's: it is written after every candidate (a cancelled search keeps what it found), listed
by `cutegen versions`, and any version can be shown as a diff and restored.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cutegen.agent import objective as objectives
from cutegen.agent.history import text_id
from cutegen.agent.patch import unified
from cutegen.agent.transcript import kernel_folder
from cutegen.files import resolved, write_atomic
from cutegen.state import StateDir

SCHEMA_VERSION = 1
# `speedup` is the time ratio over the parent; `gain` and `noise` the judge's ratio and noise by the objective it
# compared with (`objective`: candidates._compare)
KEPT_FIGURES = ("median_ms", "spread", "speedup", "noise", "baseline_ms", "gb_per_s", "gpu", "gain", "objective",
                "j_per_call", "energy_spread")
# the figures of a version against its parent (the rest are its own): a start made again keeps them
EDGE_FIGURES = ("speedup", "noise", "baseline_ms", "gain", "objective")


@dataclass
class Node:
    id: str
    parent: str | None
    change: str  # the direction it was asked for ("" for a root)
    ok: bool  # the root, or verified better than its parent
    verdict: str
    label: str
    figures: dict = field(default_factory=dict)
    record: str | None = None  # the run record's path
    step: int = 0
    time: float = 0.0
    expansions: int = 0  # how often candidates were asked of it
    streak: int = 0  # expansions in a row that gave at least one ok child (progressive widening)
    exhausted: bool = False  # an expansion of it gave nothing ok, or no direction is left: never expanded again


@dataclass
class Failure:
    """A candidate that did not join as a better version: what was asked of which node, and why not."""

    node: str  # the version it was made from
    change: str
    verdict: str
    why: str  # one line: the label, or the edit's rejection
    step: int = 0
    version: str | None = None  # its text's id, when it had one


class VersionTree:
    def __init__(self, state_dir: Path | StateDir, kernel: Path):
        self.folder = kernel_folder(state_dir, kernel)
        self.path = self.folder / "tree.json"
        self.kernel = str(resolved(kernel))  # a symlink loop stays as written: its tree is simply empty
        self.nodes: dict[str, Node] = {}
        self.failures: list[Failure] = []
        self.searches: list[dict] = []
        self._load()

    # -- storage ------------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            return  # an unknown or damaged tree starts over (its texts stay under versions/)
        known = set(Node.__dataclass_fields__)
        self.nodes = {n["id"]: Node(**{k: v for k, v in n.items() if k in known}) for n in data.get("nodes", [])}
        self.failures = [Failure(**f) for f in data.get("failures", [])]
        self.searches = list(data.get("searches", []))

    def save(self) -> None:
        data = {"schema": SCHEMA_VERSION, "kernel": self.kernel, "nodes": [asdict(n) for n in self.nodes.values()],
                "failures": [asdict(f) for f in self.failures], "searches": self.searches}
        write_atomic(self.path, json.dumps(data, indent=1))

    def text(self, vid: str) -> str | None:
        try:
            return (self.folder / "versions" / f"{vid}.cu").read_text()
        except OSError:
            return None

    def _keep_text(self, text: str) -> str:
        vid = text_id(text)
        target = self.folder / "versions" / f"{vid}.cu"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text)
        return vid

    # -- growing ------------------------------------------------------------------------------

    def root(self, text: str, figures: dict, label: str, verdict: str, record: str | None) -> Node:
        """The version a search starts from: the node of this text (an earlier search's, applied since), or a new
        root. Ratios on its line of versions are against it from now on (`gain_by`)."""
        vid = self._keep_text(text)
        node = self.nodes.get(vid)
        if node is None:
            node = Node(vid, None, "", True, verdict, label, _kept(figures), record, 0, time.time())
            self.nodes[vid] = node
        node.ok, node.exhausted = True, False  # a search may expand its own start again
        if isinstance(figures.get("median_ms"), (int, float)):  # its own figures afresh, its edge from its parent kept
            edge = {k: node.figures[k] for k in EDGE_FIGURES if node.parent and k in node.figures}
            node.figures = {**_kept(figures), **edge}
        self.save()
        return node

    def add(self, parent: Node, text: str, change: str, *, ok: bool, verdict: str, label: str, figures: dict,
            ratio: float | None, record: str | None, step: int) -> Node:
        """A candidate made from `parent` that the judge saw; `ratio`: its improvement over the parent."""
        vid = self._keep_text(text)
        node = self.nodes.get(vid)
        if node is None or (ok and not node.ok):
            node = Node(vid, parent.id, change, ok, verdict, label, _kept(figures), record, step, time.time())
            self.nodes[vid] = node
        if not ok:
            self.failures.append(Failure(parent.id, change, verdict, label, step, vid))
        self.save()
        return node

    def fail(self, parent: Node, change: str, verdict: str, why: str, step: int) -> None:
        """A candidate that never became a version (the edit was rejected, the LLM failed)."""
        self.failures.append(Failure(parent.id, change, verdict, why.splitlines()[0][:300] if why else "", step))
        self.save()

    # -- reading ------------------------------------------------------------------------------

    @property
    def objective(self) -> str:
        """What "better" meant when the tree was searched: the latest search's objective (time where none says)."""
        named = [s["objective"] for s in self.searches if s.get("objective")]
        return objectives.known(named[-1] if named else None)

    def gain_by(self, node: Node, objective: str | None = None) -> float | None:
        """A version's ratio by `objective` (the tree's by default; > 1 is better) against the start of its line
        of versions (`start_of`), through the path between them: the versions from their common ancestor down to
        it over those down to the start. None where that figure was not measured along the path."""
        objective = objectives.known(objective or self.objective)
        start = self.start_of(node)
        if not isinstance(objectives.score(objective, start.figures), objectives.Score):
            return None
        mine, theirs = self.chain(node.id), self.chain(start.id)
        shared = 0
        while shared < min(len(mine), len(theirs)) and mine[shared].id == theirs[shared].id:
            shared += 1
        down, up = _product(mine[shared:], objective), _product(theirs[shared:], objective)
        return down / up if down is not None and up is not None else None

    def start_of(self, node: Node) -> Node:
        """The start a version's ratios are against: the latest search's start on its line of versions (the tree
        under the same first version), or that first version."""
        top = self.chain(node.id)[0]
        for s in reversed(self.searches):
            start = self.nodes.get(s.get("root"))
            if start is not None and self.chain(start.id)[0].id == top.id:
                return start
        return top

    def ranked(self, objective: str | None = None) -> list[Node]:
        """Verified versions, most promising first by `objective` (the tree's by default): measured before
        unmeasured; measured ones by gain (the earlier of two equal ones first); unmeasured ones (no GPU) newest
        first, so a search without timings walks on."""
        gains = {n.id: self.gain_by(n, objective) for n in self.nodes.values() if n.ok}
        return sorted((self.nodes[vid] for vid in gains), key=lambda n: (
            (False, -(gains[n.id] or 0.0), n.step, n.time) if gains[n.id] is not None
            else (True, 0.0, -n.step, -n.time)))

    def best(self, objective: str | None = None) -> Node | None:
        """The best version by `objective` (the tree's by default) on the latest search's line of versions (those
        comparable with its start; a line started afresh from unrelated text is not): verified better than that
        start (its gain by that figure above 1), not a start itself; None when no version is. The one choice of
        "best" (CLI, editor, Restore Best)."""
        made = {n.id for n in self._made()}
        for n in self.ranked(objective):  # measured first, the largest gain first
            if n.id in made and (gain := self.gain_by(n, objective)) is not None:
                return n if gain > 1 else None
        return None

    def _made(self) -> list[Node]:
        """The verified versions that are not starts, on the latest search's line."""
        latest = self.nodes.get(str(self.searches[-1].get("root"))) if self.searches else None
        top = self.chain(latest.id)[0].id if latest is not None else None
        return [n for n in self.nodes.values()
                if n.ok and n.parent and (top is None or self.chain(n.id)[0].id == top)]

    def why_no_best(self, objective: str | None = None) -> str:
        """Why `best` is None, in a few words ("" when it is not)."""
        objective = objectives.known(objective or self.objective)
        if self.best(objective) is not None:
            return ""
        made = self._made()
        figure = {"time": "timed", "energy": "measured for energy",
                  "edp": "both timed and measured for energy"}[objective]
        if not made:
            return "no version besides a start was verified"
        if all(self.gain_by(n, objective) is None for n in made):
            cause = "no GPU, or no problem paired with the kernel" if objective == "time" else \
                "no GPU, or no energy counter (NVML) to read"
            return f"no verified version was {figure}, and the best is judged by {objective} ({cause})"
        return f"no version was verified {objectives.WORDS[objective].what} than its start"

    def ratio(self, n: Node) -> str:
        """A version's ratio against its start (`start_of`) by the tree's objective, with the judge's noise."""
        return ratio_text(self.gain_by(n), n.figures.get("noise"), self.objective)

    def children(self, vid: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.parent == vid]

    def tried(self, vid: str) -> set[str]:
        """The directions already asked of a node (whatever came of them)."""
        return {n.change for n in self.children(vid)} | {f.change for f in self.failures if f.node == vid}

    def depth(self, vid: str) -> int:
        d, n = 0, self.nodes.get(vid)
        while n is not None and n.parent is not None and d < len(self.nodes):
            d, n = d + 1, self.nodes.get(n.parent)
        return d

    def chain(self, vid: str) -> list[Node]:
        """The path from the root to a node, root first."""
        out: list[Node] = []
        n = self.nodes.get(vid)
        while n is not None and len(out) <= len(self.nodes):
            out.append(n)
            n = self.nodes.get(n.parent) if n.parent else None
        return out[::-1]

    def diff(self, vid: str, name: str) -> str:
        """The unified diff from a version's parent (or an empty file, for the start) to the version."""
        from cutegen.agent.patch import unified

        node = self.nodes[vid]
        parent = (self.text(node.parent) if node.parent else "") or ""
        return unified(parent, self.text(vid) or "", name)

    def find(self, prefix: str) -> Node | None:
        matches = [n for vid, n in self.nodes.items() if vid.startswith(prefix)]
        return matches[0] if len(matches) == 1 else None

    # -- for an editor ------------------------------------------------------------------------

    def view(self, current: str) -> dict:
        """The whole tree as plain data: every version (parents first), which one is the file's `current` text,
        the objective "best" is judged by, and the best version (`best`, or why there is none: `no_best`)."""
        here, best = text_id(current), self.best()
        nodes = sorted(self.nodes.values(), key=lambda n: (self.depth(n.id), n.step, n.time))
        return {"kernel": self.kernel, "tree": str(self.path), "size": len(self.nodes),
                "failures": len(self.failures), "current": here if here in self.nodes else None,
                "objective": self.objective, "best": self.summary(best) if best else None,
                "no_best": self.why_no_best() if self.nodes else "",
                "versions": [{**self.summary(n), "current": n.id == here,
                              "best": best is not None and n.id == best.id} for n in nodes]}

    def summary(self, n: Node) -> dict:
        gain, noise = self.gain_by(n), n.figures.get("noise")
        return {"id": n.id, "parent": n.parent, "change": n.change, "path": [c.change for c in self.chain(n.id)
                                                                           if c.change],
                "ok": n.ok, "verdict": n.verdict, "label": n.label, "gain": gain, "noise": noise,
                "ratio": ratio_text(gain, noise, self.objective), "step": n.step, "record": n.record}

    def version(self, vid: str, current: str) -> dict | None:
        """One version for a diff view: its summary, its text and the diff from `current` to it; None when no
        version's id starts with `vid` (or more than one's does), or its text is gone."""
        node = self.find(vid)
        text = self.text(node.id) if node is not None else None
        if node is None or text is None:
            return None
        name = Path(self.kernel).name
        return {**self.summary(node), "text": text, "diff": unified(current, text, name)}


def _product(path: list[Node], objective: str) -> float | None:
    """The product of the ratios over their parents of the versions of `path` by `objective`, as the judge
    figured each (None if one is missing)."""
    product = 1.0
    for n in path:
        r = n.figures.get("speedup") if objective == "time" else \
            n.figures.get("gain") if n.figures.get("objective") == objective else None
        if not isinstance(r, (int, float)) or r <= 0:
            return None
        product *= r
    return product


def ratio_text(gain: float | None, noise: object, objective: str = "time") -> str:
    """A ratio against a search's start with the judge's noise: "2.10× ±3%" (time), "1.30× energy ±5%", or
    why there is none ("not timed", "energy not measured")."""
    if gain is None:
        return {"time": "not timed", "energy": "energy not measured"}.get(objective, "EDP not measured")
    word = objectives.WORDS[objectives.known(objective)].ratio
    return f"{gain:.2f}×" + (f" {word}" if word else "") + (f" ±{noise:.0%}" if isinstance(noise, (int, float))
                                                           else "")


def _kept(figures: dict) -> dict:
    return {k: figures[k] for k in KEPT_FIGURES if k in figures}
