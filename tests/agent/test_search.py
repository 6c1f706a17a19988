"""Optimize as a search (agent/search.py) and the tree of versions (agent/tree.py).

The policy (which versions a step expands, with which directions; widening; exhaustion; dead directions; the
memory told to the model) on trees of the judge's own Verifications (`_compare`, as the GPU path makes them); then
whole searches with the scripted endpoint (real HTTP, the real openai client) and the real Verifier, whose check
and build tiers are real nvcc compiles. Without a GPU the judge ends at "compiled, not run": the search then walks
on from its newest verified version and says the speed was not measured. The GPU landscapes are
bench/search_landscape.py's."""

from __future__ import annotations

import pytest

from cutegen.agent.candidates import CandidateVerdict, Verification, _compare
from cutegen.agent.search import Limits, Shape, dead_directions, memory_text, plan, ratio_of, settle
from cutegen.agent.tree import VersionTree
from cutegen.settings import Settings
from tests.support.llm import llm_settings
from tests.agent.test_loop import KERNEL, _kernel

DIRECTIONS = ["vectorize", "more bytes in flight", "fuse", "grid shape", "cheaper math"]


def _timed(before: float, after: float, spread: float = 0.01) -> Verification:
    """What the judge returns for a correct candidate timed against its parent."""
    return _compare({"median_ms": before, "spread": spread}, {"median_ms": after, "spread": spread},
                    "correct on 5 trials", ["check", "build", "test", "time"], None)


def _add(tree, parent, text, change, v, step=1):
    return tree.add(parent, text, change, ok=v.ok, verdict=str(v.verdict), label=v.label, figures=v.figures,
                    ratio=ratio_of(v), record=None, step=step)


@pytest.fixture
def tree(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text("start")
    t = VersionTree(tmp_path / ".cutegen", kernel)
    t.root("start", {"median_ms": 6.0, "spread": 0.01}, "compiles · 6.000 ms", "verified", None)
    return t


def test_search_shapes_parse_and_refuse_plainly():
    assert Shape.parse("greedy").greedy and (Shape.parse("beam:4x3").width, Shape.parse("beam:4x3").k) == (4, 3)
    assert str(Shape.parse(" beam:2x2 ")) == "beam:2x2"
    for bad in ("beam:4", "beam:0x2", "beam:2x99", "best", ""):
        with pytest.raises(ValueError, match="greedy|1 to 16"):
            Shape.parse(bad)
    s, problems = Settings.from_dict({"optimizeSearch": "beam:four", "optimizeSteps": 0})
    assert s.optimize_search == "greedy" and s.optimize_steps == 3
    assert any("cutegen.optimizeSearch must be greedy or beam:WxK" in p for p in problems)


def test_the_most_promising_versions_are_expanded_each_in_directions_not_tried(tree):
    root = tree.nodes[next(iter(tree.nodes))]
    fast = _add(tree, root, "fast", "vectorize", _timed(6.0, 3.0))  # 2×
    mid = _add(tree, root, "mid", "grid shape", _timed(6.0, 4.0))  # 1.5×
    same = _add(tree, root, "same", "fuse", _timed(6.0, 5.95))  # within noise: not a better version
    assert same.ok is False and same.verdict == "not-faster" and (tree.gain_by(fast), tree.gain_by(mid)) == (2.0, 1.5)
    steps = plan(tree, DIRECTIONS, Shape(2, 2, False), root.id)
    assert [(n.id, ds) for n, ds in steps] == [(fast.id, ["more bytes in flight", "fuse"]),
                                               (mid.id, ["vectorize", "more bytes in flight"])]
    # the start keeps its untried directions: with width 3 it comes third
    steps = plan(tree, DIRECTIONS, Shape(3, 2, False), root.id)
    assert steps[2] == (root, ["more bytes in flight", "cheaper math"])


def test_a_version_that_keeps_yielding_widens_and_one_that_yields_nothing_is_not_expanded_again(tree):
    root = tree.nodes[next(iter(tree.nodes))]
    better = _timed(6.0, 4.0)
    child = _add(tree, root, "a", "vectorize", better)
    settle(tree, root, [better, None])
    assert root.streak == 1 and not root.exhausted
    assert dict((n.id, ds) for n, ds in plan(tree, DIRECTIONS, Shape(2, 2, False), root.id))[root.id] == \
        ["more bytes in flight", "fuse", "grid shape"]  # k = 2, plus one for the streak
    slower = _timed(4.0, 4.4)
    _add(tree, child, "a-slow", "fuse", slower, step=2)
    settle(tree, child, [slower, None])
    assert child.exhausted
    assert child.id not in {n.id for n, _ in plan(tree, DIRECTIONS, Shape(4, 2, False), root.id)}
    reloaded = VersionTree(tree.folder.parent.parent, tree.kernel)  # what a later search reads back
    assert reloaded.nodes[child.id].exhausted and reloaded.nodes[root.id].streak == 1


def test_what_failed_is_remembered_told_to_the_model_and_a_dead_direction_is_not_asked_again(tree):
    root = tree.nodes[next(iter(tree.nodes))]
    child = _add(tree, root, "a", "vectorize", _timed(6.0, 4.0))
    tree.fail(root, "fuse", "check-failed", "does not compile: identifier \"x4\" is undefined\nmore", 1)
    _add(tree, root, "b", "grid shape", _timed(6.0, 6.6))
    tree.fail(child, "fuse", "patch-rejected", "the edit was rejected: no hunk applies", 2)
    assert dead_directions(tree) == {"fuse"}  # failed twice, never better
    memory = memory_text(tree, root)
    assert 'fuse: check-failed: does not compile: identifier "x4" is undefined' in memory
    assert "grid shape: not-faster" in memory and "slower" in memory
    assert "Directions that failed repeatedly on other versions: fuse" in memory
    steps = dict((n.id, ds) for n, ds in plan(tree, DIRECTIONS, Shape(2, 3, False), root.id))
    assert "fuse" not in steps[child.id] + steps[root.id]
    assert "This version already has these changes (verified): vectorize (1.50×)" in memory_text(tree, child)


def test_the_judges_verdict_decides_better_and_its_figures_the_ratio():
    v = _timed(6.0, 3.0)
    assert v.ok and ratio_of(v) == 2.0
    not_run = Verification(True, CandidateVerdict.VERIFIED, "compiled and built · not run: no GPU on this machine",
                           "compiled, not run", figures={"gpu": False}, tiers=["check", "build"])
    assert ratio_of(not_run) is None


# -- whole searches: scripted endpoint, real nvcc -----------------------------------------------

GOOD = KERNEL.replace("BROKEN", "0.5f")
PROBLEM = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 0.5\n"
           "def get_inputs():\n    return [torch.rand(8)]\ndef get_init_inputs():\n    return []\n")


def _sr(old: str, new: str) -> str:
    return f"k.cu\n```\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n"


def _landscape():
    """Replies a model could write, keyed by the direction asked and the version it is asked of."""
    v1 = "  y[i] = 0.5f;"
    return [
        # vectorize: always a compile error (a float4 of an undeclared name): dead after two tries
        {"match": "DIRECTION: 128-bit", "repeat": True,
         "reply": "CHANGE: 128-bit vectorized loads\n" + _sr("  int i = threadIdx.x;", "  int i = threadIdx.x; float4 v = x4[i];")},
        {"match": "DIRECTION: More bytes", "repeat": True,
         "reply": "CHANGE: More bytes in flight\n" + _sr(v1, "  y[i] = __fmul_rn(1.0f, 0.5f);")},
        {"match": "DIRECTION: Fuse", "repeat": True, "reply": "CHANGE: Fuse\n" + _sr("  y[i] = nothing_like_this;", "x")},
        {"match": "DIRECTION: Grid shape", "repeat": True,
         "reply": "CHANGE: Grid shape\n" + _sr("  int i = threadIdx.x;", "  int i = blockIdx.x * blockDim.x + threadIdx.x;")},
        {"match": "DIRECTION: Cheaper math", "repeat": True, "reply": "CHANGE: Cheaper math\nIt is already as cheap as it gets."},
    ]


def _search_agent(agent_with, kept_path, server, **extra):
    (kept_path / "k.py").write_text(PROBLEM)
    return agent_with(llm_settings(server.url, **extra))


def _asked(server) -> list[tuple[str, str]]:
    """(direction, the memory part of the prompt) of every request, in order."""
    out = []
    for r in server.requests:
        text = r["messages"][-1]["content"]
        direction = text.split("DIRECTION: ", 1)[1].split("\n", 1)[0]
        out.append((direction[:12], text))
    return out


def test_a_search_grows_the_tree_remembers_failures_and_offers_its_best(agent_with, kept_path, scripted):
    server = scripted(_landscape())
    path = _kernel(kept_path, GOOD)
    agent = _search_agent(agent_with, kept_path, server)
    out = agent.search(path, GOOD, Shape(1, 2, False), limits=Limits(steps=3), parallel=2)
    asked = _asked(server)
    # step 1: the start, two directions; step 2: its verified child (no timings: the newest), two others;
    # step 3: the start again (the child's candidates all failed), k + 1 (it yielded), never the dead vectorize
    directions = [a for a, _ in asked]  # a step's requests go out together: their order within it is the network's
    assert [sorted(directions[:2]), sorted(directions[2:4]), sorted(directions[4:])] == [
        ["128-bit vect", "More bytes i"], ["128-bit vect", "Fuse neighbo"], ["Cheaper math", "Fuse neighbo", "Grid shape: "]]
    step3 = [text for _, text in asked[4:]]
    assert all("Tried on this version already" in t and "128-bit vectorized loads" in t for t in step3)
    assert all("does not compile" in t for t in step3)
    assert all("Directions that failed repeatedly on other versions: 128-bit" in t for t in step3)
    tree = VersionTree(kept_path / ".cutegen", path)  # read back as `cutegen versions` reads it
    verdicts = sorted(n.verdict for n in tree.nodes.values())
    assert verdicts == ["check-failed", "check-failed", "verified", "verified", "verified"]
    assert sorted(f.verdict for f in tree.failures) == ["check-failed", "check-failed", "patch-rejected",
                                                        "patch-rejected", "patch-rejected"]
    assert out.ok and out.proposal.label.endswith("speed not measured · 5 versions in the tree, 7 candidates this search (3 step(s) done)")
    assert "blockIdx.x * blockDim.x" in out.proposal.new_text and out.proposal.base_text == GOOD
    assert out.proposal.figures["tree_size"] == 5 and out.proposal.figures["search"]["steps"] == 3
    assert out.usage.calls == 7


def test_budgets_stop_a_search_and_a_cancel_keeps_the_tree(agent_with, kept_path, scripted):
    server = scripted(_landscape())
    path = _kernel(kept_path, GOOD)
    out = _search_agent(agent_with, kept_path, server).search(path, GOOD, Shape(1, 1, False), limits=Limits(steps=5, tokens=1))
    assert len(server.requests) == 1 and "token budget (1 tokens) is spent" in out.message

    agent = _search_agent(agent_with, kept_path, server)
    stages = []

    def on_stage(stage):  # the person presses cancel when the second step starts
        stages.append(stage)
        if stage.startswith("search step 2"):
            agent.cancel()

    agent.on_stage = agent.verifier.on_stage = on_stage
    before = len(server.requests)
    out = agent.search(path, GOOD, Shape(1, 1, False), limits=Limits(steps=5), parallel=1)
    assert out.message.endswith("(cancelled)") and len(server.requests) - before <= 2
    tree = VersionTree(kept_path / ".cutegen", path)
    assert any(n.change.startswith("More bytes") and n.ok for n in tree.nodes.values())  # step 1's version is kept


def test_greedy_stays_one_optimize_step(agent_with, kept_path, scripted):
    server = scripted(_landscape() + [{"match": "TASK: optimize `k.cu` by ONE change\n", "reply": "CHANGE: grid\n"
                                       + _sr("  int i = threadIdx.x;", "  int i = blockIdx.x * blockDim.x + threadIdx.x;")}])
    path = _kernel(kept_path, GOOD)
    out = _search_agent(agent_with, kept_path, server).optimize(path, GOOD)
    assert out.ok and len(server.requests) == 1 and "DIRECTION:" not in server.requests[0]["messages"][-1]["content"]
    assert not (VersionTree(kept_path / ".cutegen", path).path).exists()


# -- the command line ---------------------------------------------------------------------------


def _cli(ws, *args, url=None):
    import os
    import subprocess
    import sys

    from tests.support.llm import KEY, KEY_ENV
    from tests.support.paths import ROOT

    env = {**os.environ, KEY_ENV: KEY, "PYTHONPATH": str(ROOT / "server"), "CUTEGEN_LLM_BASE_URL": "",
           "CUTEGEN_LLM_MODEL": ""}
    llm = ["--llm-base-url", url, "--llm-model", "scripted", "--llm-api-key-env", KEY_ENV, "--llm-retries", "1"] \
        if url else []
    return subprocess.run([sys.executable, "-m", "cutegen", *args, *llm, "--state-dir", str(ws / ".cutegen")],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=600)


def test_optimize_search_then_versions_lists_shows_and_restores(kept_path, scripted):
    server = scripted(_landscape())
    path = _kernel(kept_path, GOOD)
    (kept_path / "k.py").write_text(PROBLEM)
    bad = _cli(kept_path, "optimize", "k.cu", "--search", "beam:4", url=server.url)
    assert bad.returncode == 2 and "a search is `greedy` or `beam:WxK`" in bad.stderr
    done = _cli(kept_path, "optimize", "k.cu", "--search", "beam:1x2", "--steps", "1", url=server.url)
    assert done.returncode == 0, done.stderr
    assert "+  y[i] = __fmul_rn(1.0f, 0.5f);" in done.stdout and "3 versions in the tree" in done.stderr
    assert path.read_text() == GOOD  # offered, not applied
    listed = _cli(kept_path, "versions", "k.cu")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("3 versions of k.cu (1 candidates that did not join as better versions)")
    assert lines[1].startswith("*     ") and lines[1].endswith("(start)")  # the file's text, the root
    (good,) = [ln for ln in lines if "More bytes" in ln]
    (failed,) = [ln for ln in lines if "128-bit" in ln]
    assert "not timed" in good and "verified" in good and "check-failed" in failed
    vid = next(w for w in good.split() if len(w) == 10)
    shown = _cli(kept_path, "versions", "k.cu", "--show", vid)
    assert shown.returncode == 0 and "+  y[i] = __fmul_rn(1.0f, 0.5f);" in shown.stdout
    assert _cli(kept_path, "versions", "k.cu", "--show", "zzzz").returncode == 2
    path.write_text(GOOD.replace("0.5f", "0.25f"))  # the person edits the file meanwhile
    restored = _cli(kept_path, "versions", "k.cu", "--restore", vid, "--apply")
    assert restored.returncode == 0, restored.stderr
    assert "restores version" in restored.stderr and "applied to" in restored.stderr
    assert "__fmul_rn(1.0f, 0.5f)" in path.read_text()
    assert "-  y[i] = 0.25f;" in restored.stdout  # the patch is from the text the file held, shown before it is written
