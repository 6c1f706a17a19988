"""The suite report's search column names the objective a search ranked by: an energy search's 1.30x is less
energy per call, not a speedup (a time search's ratio stays unlabelled, as the CLI's listing does)."""

from __future__ import annotations

from cutegen.suite.report import _search_cell


def row(objective: str | None) -> dict:
    return {"search_tree_size": 5, "search_best": "0123456789abcdef", "search_ratio": 1.3, "search_noise": 0.02,
            "search_change": "128-bit loads", "search_objective": objective}


def test_an_energy_search_says_its_ratio_is_energy():
    assert _search_cell(row("energy")) == "0123456789 1.30× energy ±2% (128-bit loads) · 5 versions in the tree"


def test_a_time_search_and_an_older_report_read_as_before():
    for objective in ("time", None):
        assert _search_cell(row(objective)) == "0123456789 1.30× ±2% (128-bit loads) · 5 versions in the tree"
