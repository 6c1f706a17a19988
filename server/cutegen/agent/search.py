"""Optimization as a search: each step asks for k candidates of each of the most promising versions, each in
another direction of the workload's menu, builds them in parallel on the CPU and has the judge verify them one
at a time on the GPU, pipelined (the judge verifies candidate i while the CPU builds i+1). Every version the judge
saw joins the kernel's tree (agent/tree.py); what failed, and why, is the search's memory, told to the model.

"Better than" is the judge's: a candidate is a better version exactly when its Verification is `ok` against its
parent's figures (`candidates._compare`, by the Verifier's objective, which the tree records); versions are ranked
by their gain by that objective (`VersionTree.ranked`).

The search's shape is `beam:WxK`: each step expands the W most promising versions of the whole tree, K candidates
each (a version that keeps yielding gets one more per expansion in a row that gave a better child: progressive
widening; one whose candidates all failed, or with no direction left, is not expanded again). `greedy` is one
Optimize step, the loop in agent.py (`beam:1x1` is the walk that repeated Optimize runs make). Budgets: steps,
wall minutes, LLM tokens; a cancel stops it and keeps the tree.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cutegen.agent import prompts
from cutegen.agent.candidates import Built, CandidateVerdict, Verification
from cutegen.agent.history import History, measured_figures, text_id
from cutegen.agent.llm import LLMError
from cutegen.agent.patch import apply_reply, unified
from cutegen.agent.reply import Usage
from cutegen.agent.tree import Node, VersionTree
from cutegen.settings import SEARCH_SPEC

SPEC = SEARCH_SPEC
DEAD_AFTER = 2  # a direction that failed this often anywhere in the tree is not asked for again
CONFIRMATIONS = 3  # at most this many of the best versions are compared directly with the start


@dataclass(frozen=True)
class Shape:
    width: int = 1
    k: int = 1
    greedy: bool = True

    @classmethod
    def parse(cls, spec: str) -> "Shape":
        m = SPEC.match(spec.strip())
        if not m:
            raise ValueError(f"a search is `greedy` or `beam:WxK` (W versions expanded a step, K candidates each), "
                             f"not {spec!r}")
        if m.group(1) is None:
            return cls()
        width, k = int(m.group(1)), int(m.group(2))
        if not (1 <= width <= 16 and 1 <= k <= 16):
            raise ValueError(f"beam:{width}x{k}: width and candidates must each be 1 to 16")
        return cls(width, k, False)

    def __str__(self) -> str:
        return "greedy" if self.greedy else f"beam:{self.width}x{self.k}"


@dataclass
class Limits:
    steps: int = 3
    minutes: float = 30.0
    tokens: int = 200_000


# -- the policy: pure functions of the tree ---------------------------------------------------


def ratio_of(v: Verification) -> float | None:
    """A verified candidate's improvement over its parent, as the judge figured it (> 1 is better)."""
    r = v.figures.get("speedup")
    return float(r) if isinstance(r, (int, float)) and r > 0 else None


def dead_directions(tree: VersionTree) -> set[str]:
    """Directions that failed DEAD_AFTER times anywhere in the tree and never gave a better version."""
    counts: dict[str, int] = {}
    for f in tree.failures:
        counts[f.change] = counts.get(f.change, 0) + 1
    good = {n.change for n in tree.nodes.values() if n.ok}
    return {d for d, c in counts.items() if c >= DEAD_AFTER and d and d not in good}


def plan(tree: VersionTree, directions: list[str], shape: Shape,
         root: str | None = None) -> list[tuple[Node, list[str]]]:
    """The step's expansions: the `shape.width` most promising versions (of `root`'s subtree) that still have a
    direction left, each with its directions (k, plus its streak of yielding expansions), none asked of it before,
    none already on its path, none dead. A version with nothing left is marked exhausted."""
    dead = dead_directions(tree)
    out: list[tuple[Node, list[str]]] = []
    for node in tree.ranked():
        if len(out) == shape.width:
            break
        if node.exhausted or (root is not None and root not in {n.id for n in tree.chain(node.id)}):
            continue
        tried = tree.tried(node.id) | {n.change for n in tree.chain(node.id)}  # asked of it, or already in it
        fresh = [d for d in directions if d not in tried and d not in dead]
        if not fresh:
            node.exhausted = True
            continue
        out.append((node, fresh[:shape.k + node.streak]))
    return out


def settle(tree: VersionTree, node: Node, verifications: list[Verification | None]) -> None:
    """After an expansion: a version none of whose candidates was better is not expanded again; one that gave a
    better version widens (its streak grows)."""
    node.expansions += 1
    if any(v is not None and v.ok for v in verifications):
        node.streak += 1
    else:
        node.exhausted, node.streak = True, 0
    tree.save()


def memory_text(tree: VersionTree, node: Node) -> str:
    """What the search learned, for the model: what was tried from this version and how it ended, what worked on
    the way here, and the directions dead everywhere."""
    lines = []
    chain = [n for n in tree.chain(node.id) if n.change]
    if chain:
        lines.append("This version already has these changes (verified): " + "; ".join(
            f"{n.change} ({n.figures['speedup']:.2f}×)" if isinstance(n.figures.get("speedup"), (int, float))
            else n.change for n in chain))
    tried = [f for f in tree.failures if f.node == node.id]
    if tried:
        lines.append("Tried on this version already, do not propose again:")
        lines += [f"- {f.change or '(no direction)'}: {f.verdict}: {f.why[:200]}" for f in tried[-8:]]
    dead = sorted(dead_directions(tree))
    if dead:
        lines.append("Directions that failed repeatedly on other versions: " + "; ".join(dead))
    return "\n".join(lines)


# -- the search --------------------------------------------------------------------------------


@dataclass
class _Made:
    """A candidate on its way: the LLM's reply placed on its parent's text and built (or why not)."""

    node: Node
    direction: str
    new_text: str | None = None
    diff: str = ""
    result: Verification | Built | None = None  # None: no text (the LLM failed, or the edit was rejected)
    why: str = ""
    verdict: str = ""
    build_s: float = 0.0


@dataclass
class Stats:
    candidates: int = 0
    judged: int = 0  # candidates the judge verified (GPU)
    verified: int = 0  # better versions found
    judge_s: float = 0.0  # seconds the judge was busy
    wall_s: float = 0.0
    steps: int = 0
    stop: str = ""

    def to_json(self) -> dict:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass
class SearchResult:
    tree: VersionTree
    root: Node
    best: Node | None
    confirmed: Verification | None  # the best compared directly with the start (None where it needs not)
    stats: Stats
    usage: Usage = field(default_factory=Usage)


class Search:
    """One search from `text` (the kernel's current version). `agent`: the Agent whose LLM, verifier, knowledge
    and budget it uses. `parallel`: build slots (1: no pipeline, each candidate built then judged in turn)."""

    def __init__(self, agent, kernel: Path, text: str, shape: Shape, limits: Limits, *, transcript, usage: Usage,
                 parallel: int | None = None):
        self.agent, self.kernel, self.text = agent, Path(kernel).resolve(), text
        self.shape, self.limits, self.t, self.usage = shape, limits, transcript, usage
        self.parallel = parallel or max(1, min(shape.width * shape.k, os.cpu_count() or 1))
        self.tree = VersionTree(agent.state_dir, self.kernel)
        self.history = History(agent.state_dir, self.kernel)
        self.stats = Stats()
        self._lock = threading.Lock()  # the usage and the prompt budget, shared by the build slots
        self._note_lock = threading.Lock()
        self._started = 0.0

    @property
    def verifier(self):
        return self.agent.verifier

    def run(self, base: Verification, *, workload: str, directions: list[str], menu: dict[str, str],
            profile_txt: str) -> SearchResult:
        """`base`: the start's own verification (timed where it could be); `directions`: the menu's titles, in the
        order to try them; `menu`: each title's menu text."""
        self._started = time.perf_counter()
        root = self.tree.root(self.text, base.figures, base.label, str(base.verdict),
                              base.record.path if base.record is not None else None)
        self.root_id = root.id
        self.tree.searches.append({"shape": str(self.shape), "objective": self.verifier.objective, "root": root.id,
                                   "started": time.time()})
        self.workload, self.menu, self.profile_txt = workload, menu, profile_txt
        try:
            self._steps(directions)
        except KeyboardInterrupt:  # Ctrl-C in a terminal: stop everything, keep the tree
            self.verifier.cancel_event.set()
            self.stats.stop = "cancelled"
        self.stats.wall_s = time.perf_counter() - self._started
        best, confirmed = self._best(root)
        self.tree.searches[-1].update(ended=time.time(), **self.stats.to_json(), best=best.id if best else None)
        self.tree.save()
        return SearchResult(self.tree, root, best, confirmed, self.stats, self.usage)

    def _steps(self, directions: list[str]) -> None:
        for step in range(1, self.limits.steps + 1):
            why = self._out_of_budget()
            if why:
                self.stats.stop = why
                return
            expansions = plan(self.tree, directions, self.shape, self.root_id)
            if not expansions:
                self.stats.stop = "no version is left to expand (every direction was tried or failed)"
                return
            self.stats.steps = step
            self.agent.on_stage(f"search step {step}: {sum(len(d) for _, d in expansions)} candidates")
            outcomes = self._step(step, [(n, d) for n, ds in expansions for d in ds])
            for node, _ in expansions:
                settle(self.tree, node, [v for (n, _), v in outcomes if n is node])
            if self.verifier.cancel_event.is_set() or any(
                    v is not None and v.verdict == CandidateVerdict.CANCELLED for _, v in outcomes):
                self.stats.stop = "cancelled"
                return
        self.stats.stop = f"{self.limits.steps} step(s) done"

    def _out_of_budget(self) -> str:
        minutes = (time.perf_counter() - self._started) / 60
        if minutes >= self.limits.minutes:
            return f"the time budget ({self.limits.minutes:g} min) is spent"
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        if tokens >= self.limits.tokens:
            return f"the token budget ({self.limits.tokens:,} tokens) is spent"
        return ""

    # -- one step: ask and build in parallel, judge in order ----------------------------------

    def _step(self, step: int, slots: list[tuple[Node, str]]) -> list[tuple[tuple[Node, str], Verification | None]]:
        asks = [self._messages(node, direction) for node, direction in slots]  # fitted here: the budget is not shared
        out = []
        if self.parallel == 1:
            for (node, direction), ask in zip(slots, asks):
                out.append(((node, direction), self._judge(step, self._make(step, node, direction, *ask))))
            return out
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="cutegen-search") as pool:
            futures = [pool.submit(self._make, step, node, direction, *ask)
                       for (node, direction), ask in zip(slots, asks)]
            try:
                for slot, future in zip(slots, futures):
                    out.append((slot, self._judge(step, future.result())))
            except BaseException:
                self.verifier.cancel_event.set()  # the builds still running stop at their next tier
                for f in futures:
                    f.cancel()
                raise
        return out

    def _messages(self, node: Node, direction: str) -> tuple[list[dict], dict]:
        text = self.tree.text(node.id) or self.text
        f, gain = node.figures, self.tree.gain_by(node, "time")
        before = (f"{f['median_ms']:.3f} ms median" if isinstance(f.get("median_ms"), (int, float))
                  else "not timed") + (f" ({gain:.2f}× the start)" if gain and node.parent else "")
        messages = prompts.search_step(self.kernel.name, text, workload=self.workload, baseline=before,
                                       profile=self.profile_txt, direction=direction,
                                       details=self.menu.get(direction, ""),
                                       memory=memory_text(self.tree, node),
                                       edit_format=self.agent.settings.llm_edit_format,
                                       budget=self.agent.budget)
        fit, self.agent.budget.last = self.agent.budget.last, {}
        return messages, fit

    def _make(self, step: int, node: Node, direction: str, messages: list[dict], fit: dict) -> _Made:
        """In a build slot: ask the LLM, place the edit, run the CPU tiers (a failure of ours is named, not raised:
        the other candidates go on)."""
        try:
            return self._made(step, node, direction, messages, fit)
        except Exception as e:  # noqa: BLE001
            return _Made(node, direction, verdict=str(CandidateVerdict.JUDGE_ERROR),
                         why=f"the candidate could not be made ({type(e).__name__}: {e})")

    def _made(self, step: int, node: Node, direction: str, messages: list[dict], fit: dict) -> _Made:
        made = _Made(node, direction)
        text = self.tree.text(node.id) or self.text
        try:
            reply = self.agent.llm.chat(messages, cancel=self.verifier.cancel_event)
        except LLMError as e:
            with self._lock:
                if e.usage:
                    self.usage.add(e.usage)
                self._note(step, "optimize", direction=direction, node=node.id, messages=messages, error=e.message)
            made.verdict, made.why = "llm-error", e.message
            return made
        with self._lock:
            self.usage.add(reply.usage)
            if fit:
                self.agent.budget.last = fit
                self.agent.budget.observe(reply.usage.prompt_tokens)
                self.agent.budget.last = {}
            self._note(step, "optimize", direction=direction, node=node.id, messages=messages, reply=reply.text,
                        finish_reason=reply.finish_reason, usage=reply.usage.to_json(), budget=fit)
        p = apply_reply(reply.text, text, self.kernel.name, finish_reason=reply.finish_reason,
                        fmt=self.agent.settings.llm_edit_format)
        if p.new_text is None:
            made.verdict, made.why = "patch-rejected", f"the edit was rejected: {p.error}"
            return made
        made.new_text, made.diff = p.new_text, p.diff
        started = time.perf_counter()
        baseline = node.figures if isinstance(node.figures.get("median_ms"), (int, float)) else None
        made.result = self.verifier.prepare(self.kernel, p.new_text, baseline=baseline)
        made.build_s = time.perf_counter() - started
        return made

    def _judge(self, step: int, made: _Made) -> Verification | None:
        """On this thread, one at a time: the judge, then the tree."""
        self.stats.candidates += 1
        if made.result is None:
            self.tree.fail(made.node, made.direction, made.verdict, made.why, step)
            self._note(step, made.verdict, direction=made.direction, node=made.node.id, error=made.why)
            return None
        v = made.result
        if isinstance(v, Built):
            if self._out_of_budget() or self.verifier.cancel_event.is_set():
                return None  # built, never judged: not a finding of the search
            started = time.perf_counter()
            v = self.verifier.judge(v)
            self.stats.judge_s += time.perf_counter() - started
            self.stats.judged += 1
        if v.verdict == CandidateVerdict.CANCELLED:
            return v
        assert made.new_text is not None  # a result comes only with a text
        node = self.tree.add(made.node, made.new_text, made.direction, ok=v.ok, verdict=str(v.verdict), label=v.label,
                             figures=v.figures, ratio=ratio_of(v), record=v.record.path if v.record else None,
                             step=step)
        self.stats.verified += int(v.ok)
        self._note(step, "verify", direction=made.direction, node=made.node.id, version=node.id, diff=made.diff,
                    verification=v.to_json(), build_s=round(made.build_s, 3))
        if "time" in v.tiers and isinstance(made.node.figures.get("median_ms"), (int, float)):
            self.history.record({"action": "search", "change": made.direction, "verdict": str(v.verdict),
                                 "speedup": v.figures.get("speedup"), "from": made.node.id,
                                 "to": text_id(made.new_text)},
                                [(made.new_text, {**measured_figures(v.figures), "label": made.direction})],
                                objective=self.verifier.objective)
        return v

    def _note(self, step: int, what: str, **payload) -> None:
        """A transcript step; build slots write too, so one at a time."""
        with self._note_lock:
            self.t.step(step, what, **payload)

    # -- the answer ---------------------------------------------------------------------------

    def _best(self, root: Node) -> tuple[Node | None, Verification | None]:
        """The best version this search found (not the start), compared directly with the start where its ratio
        is a product along a path; a version the direct comparison does not confirm gives way to the next."""
        found = [n for n in self.tree.ranked()
                 if n.id != root.id and root.id in {c.id for c in self.tree.chain(n.id)}]
        if not found:
            return None, None
        if self.tree.gain_by(root) is None:
            return found[0], None  # nothing measured: the first verified version, "speed not measured"
        measured = [n for n in found if (self.tree.gain_by(n) or 0) > 1]
        tries = 0
        for n in measured:
            if n.parent == root.id:
                return n, None  # judged against the start already
            if tries == CONFIRMATIONS or self.verifier.cancel_event.is_set():
                break
            tries += 1
            self.agent.on_stage("comparing the best version with the start")
            text = self.tree.text(n.id)
            if text is None:
                continue
            v = self.verifier.candidate(self.kernel, text, baseline=root.figures)
            self._note(0, "confirm", version=n.id, verification=v.to_json())
            if v.ok:
                return n, v
        return None, None


def proposal_label(result: SearchResult, kernel_name: str) -> tuple[str, dict]:
    """The search's one line, and the figures its Proposal carries."""
    best, s = result.best, result.stats
    size = f"{len(result.tree.nodes)} versions in the tree, {s.candidates} candidates this search"
    figures = {"search": s.to_json(), "tree_size": len(result.tree.nodes), "best": best.id if best else None}
    if best is None:
        return f"No verified better version after {s.steps} step(s); {size} ({s.stop})", figures
    chain = [n.change for n in result.tree.chain(best.id) if n.change]
    path = " → ".join(chain)
    if result.confirmed is not None:
        label = f"{path}: {result.confirmed.label}"
        figures.update(result.confirmed.figures)
    elif result.tree.gain_by(best) is not None:
        label = f"{path}: {best.label}"
        figures.update(best.figures)
    else:
        label = f"{path}: {best.label} · speed not measured"
    gain = result.confirmed.figures.get("gain") if result.confirmed is not None else result.tree.gain_by(best)
    figures.update(chain=chain, gain=gain, objective=result.tree.objective)  # against the start, by the objective
    return f"{label} · {size} ({s.stop})", figures


def diff_to(result: SearchResult, text: str, kernel_name: str) -> tuple[str, str] | None:
    """(the best version's text, the diff from `text` to it), or None."""
    if result.best is None:
        return None
    new = result.tree.text(result.best.id)
    return (new, unified(text, new, kernel_name)) if new is not None else None
