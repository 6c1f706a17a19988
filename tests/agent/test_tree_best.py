"""Which version is "best" (agent/tree.py `VersionTree.best`, agent/history.py): by the objective the tree was
searched with, among the versions measured by it; an untimed version is never best, and the tree says why none is.
The search itself expands and offers by the same objective."""

from __future__ import annotations

import json

import pytest

from cutegen.agent.history import History
from cutegen.agent.search import Shape, plan, ratio_of
from tests.agent.tree_landscapes import BEST, CHANGES, START, TEXT, figures, judged, searched, untimed


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(START)
    return path


@pytest.mark.parametrize("objective", ["time", "energy", "edp"])
def test_the_best_version_is_the_best_by_the_objective_the_tree_was_searched_with(tmp_path, kernel, objective):
    tree = searched(tmp_path / ".cutegen", kernel, objective)
    assert tree.objective == objective
    assert tree.best().change == BEST[objective]
    view = tree.view(START)
    assert view["objective"] == objective and view["best"]["change"] == BEST[objective] and view["no_best"] == ""
    assert [v["change"] for v in view["versions"] if v["best"]] == [BEST[objective]]
    reread = type(tree)(tmp_path / ".cutegen", kernel)  # what tree.json keeps is enough to judge again
    assert reread.best().change == BEST[objective]


def test_a_tree_that_names_no_objective_is_judged_by_time(tmp_path, kernel):
    tree = searched(tmp_path / ".cutegen", kernel, None)
    assert tree.objective == "time" and tree.best().change == BEST["time"]


def test_the_ratio_shown_is_the_objectives(tmp_path, kernel):
    tree = searched(tmp_path / ".cutegen", kernel, "energy")
    b = next(n for n in tree.nodes.values() if n.change == BEST["energy"])
    assert tree.gain_by(b) == pytest.approx(2.5) and tree.ratio(b) == "2.50× energy ±2%"
    assert tree.gain_by(b, "time") == pytest.approx(6.0 / 5.4, rel=1e-3)


def test_an_untimed_version_is_never_best_and_the_tree_says_why(tmp_path, kernel):
    tree = untimed(tmp_path / ".cutegen", kernel)
    assert tree.best() is None and tree.ranked()  # the search still walks on from them
    assert "no verified version was timed" in tree.why_no_best()
    view = tree.view(START)
    assert view["best"] is None and not any(v["best"] for v in view["versions"])
    assert "timed" in view["no_best"]


def test_with_energy_and_no_energy_figure_no_version_is_best(tmp_path, kernel):
    tree = searched(tmp_path / ".cutegen", kernel, "time")
    tree.searches.append({"shape": "beam:1x1", "objective": "energy", "root": tree.searches[0]["root"]})
    for n in tree.nodes.values():
        n.figures.pop("j_per_call", None)
    assert tree.best() is None and "measured for energy" in tree.why_no_best()


def test_a_search_step_expands_the_best_version_by_its_objective_first(tmp_path, kernel):
    tree = searched(tmp_path / ".cutegen", kernel, "energy")
    (node, _), = plan(tree, ["more bytes in flight"], Shape(1, 1, False))
    assert node.change == BEST["energy"]


def test_the_history_best_is_by_the_objective_it_was_optimized_for(tmp_path, kernel):
    history = History(tmp_path / ".cutegen", kernel)
    (a_text, a_ms, a_j), (b_text, b_ms, b_j) = list(CHANGES.values())[:2]
    history.record({"action": "optimize"}, [(a_text, {**figures(a_ms, a_j), "label": "A"}),
                                            (b_text, {**figures(b_ms, b_j), "label": "B"}),
                                            (START, {"median_ms": 1.0, "label": "saved, no energy figure"})],
                   objective="energy")
    best, text = history.best()
    assert (best["label"], text, history.objective) == ("B", b_text, "energy")
    assert json.loads(history.path.read_text())["best"]["label"] == "B"
    timed = History(tmp_path / "other", kernel)
    timed.record({"action": "save"}, [(a_text, {**figures(a_ms, a_j), "label": "A"}),
                                      (b_text, {**figures(b_ms, b_j), "label": "B"})])
    assert timed.best()[0]["label"] == "A"  # no objective recorded: time


def test_a_second_search_from_an_applied_version_is_compared_with_the_first_through_the_path(tmp_path, kernel):
    """The first search (time) made A (2× the start) and C (1.5×); C was applied and searched again, giving D
    (1.6× over C, so 2.4× the first start). Each ratio against its own search's start would rank A (2.0) over
    D (1.6); against one start they are 1.33× and 1.6×, and D is best."""
    tree = searched(tmp_path / ".cutegen", kernel, "time")
    c_text, c_ms, c_joules = CHANGES["C: grid shape"]
    c = tree.root(c_text, figures(c_ms, c_joules), f"compiles · {c_ms:.3f} ms", "verified", None)
    tree.searches.append({"shape": "beam:1x1", "objective": "time", "root": c.id})
    v = judged(figures(c_ms, c_joules), figures(2.5, 0.05), "time")
    d = tree.add(c, TEXT.format(value="0.25f * 2.0f"), "D: fewer syncs", ok=v.ok, verdict=str(v.verdict),
                 label=v.label, figures=v.figures, ratio=ratio_of(v), record=None, step=1)
    a = next(n for n in tree.nodes.values() if n.change == BEST["time"])
    assert tree.best().id == d.id
    assert tree.gain_by(d) == pytest.approx(1.6) and tree.gain_by(a) == pytest.approx(2.0 / 1.5)
    assert tree.gain_by(c) == pytest.approx(1.0) and tree.gain_by(tree.nodes[c.parent]) == pytest.approx(1 / 1.5)
    assert tree.ratio(a).startswith("1.33×")
    reread = type(tree)(tmp_path / ".cutegen", kernel)  # C, a start again, kept how it came from its parent
    assert reread.best().id == d.id and reread.gain_by(a) == pytest.approx(2.0 / 1.5)


def test_after_a_search_from_unrelated_text_an_older_lines_version_is_not_best(tmp_path, kernel):
    """The user rewrote the kernel by hand and searched again: the first search's A (2× its own start) cannot be
    compared with the new start, so it is not offered as best over it."""
    tree = searched(tmp_path / ".cutegen", kernel, "time")
    fresh = tree.root(TEXT.format(value="2.0f"), figures(1.0, 0.02), "compiles · 1.000 ms", "verified", None)
    tree.searches.append({"shape": "beam:1x1", "objective": "time", "root": fresh.id})
    assert tree.best() is None and tree.why_no_best() == "no version besides a start was verified"
    assert tree.gain_by(next(n for n in tree.nodes.values() if n.change == BEST["time"])) == pytest.approx(2.0)
