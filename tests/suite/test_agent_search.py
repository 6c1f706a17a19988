"""`cutegen suite run --agent --search beam:WxK`: per problem, the generated kernel is optimized by one search
(agent/search.py, through Agent.search) instead of greedy steps; the row and the report give the best verified
version (its ratio against the generated kernel ± the judge's noise, its change) and the tree's size.

Scripted endpoint (real HTTP, the real openai client), real nvcc, the harness's checks and CPU timings in the
suite's workers (tests/suite/host_judge.py). The generated kernel does its work 256 times over; the candidate
"More bytes in flight" does it once, so it is faster by far more than the CPU's timing noise; the other candidate
does not compile."""

from __future__ import annotations

import pytest

from cutegen.agent.tree import VersionTree
from cutegen.suite import report
from cutegen.suite.judge import Budget
from cutegen.suite.runner import run_suite
from tests.support.llm import llm_settings
from tests.support.suite_cases import LEVEL1
from tests.suite.test_agent import generated

ONCE = "  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + fabsf(x[i]));"
SLOW = "  for (volatile int pass = 0; pass < 256; ++pass)\n  " + ONCE


def _sr(old: str, new: str) -> str:
    return f"30_Softsign.cu\n```\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n"


def replies() -> list[dict]:
    return [
        {"match": "TASK: generate `30_Softsign.cu`", "reply": generated(SLOW)},
        {"match": "DIRECTION: More bytes",
         "reply": "CHANGE: More bytes in flight — one pass, not 256\n" + _sr(SLOW, ONCE)},
        {"match": "DIRECTION: 128-bit", "reply": "CHANGE: 128-bit vectorized loads\n"
         + _sr(ONCE.strip(), "for (int64_t i = 0; i < n; ++i) y[i] = x4[i];")},
    ]


def test_a_search_per_problem_keeps_its_best_version_and_reports_it_with_the_trees_size(make_config, scripted):
    server = scripted(replies())
    config = make_config(kernels=None, agent=True, settings=llm_settings(server.url, test_timeout=20.0, sandbox="off"),
                         budget=Budget(rounds=1, llm_calls=10, wall_s=300, optimize_steps=1, search="beam:1x2"))
    (row,) = run_suite([LEVEL1 / "30_Softsign.py"], config).rows
    assert server.remaining() == 0 and row["llm_calls"] == 3  # generate, then one step of two candidates
    assert row["verdict"] == "pass" and row["optimize_steps_kept"] == 1
    kernel = config.out / "kernels" / "30_Softsign.cu"
    assert "volatile" not in kernel.read_text()  # the search's best replaced the generated kernel
    tree = VersionTree(config.state_dir, kernel)  # as `cutegen versions` reads it
    assert row["search_shape"] == "beam:1x2" and row["search_tree_size"] == len(tree.nodes) == 3
    assert sorted(n.verdict for n in tree.nodes.values()) == ["check-failed", "verified", "verified"]
    assert row["search_best"] == tree.best().id and row["search_change"].startswith("More bytes in flight")
    assert row["search_ratio"] > 1 + row["search_noise"]  # verified better: beyond the judge's noise
    assert (row["search_failures"], row["search_candidates"], row["search_steps"]) == (1, 2, 1)
    md = report.write([config.out])[0].read_text()
    header = next(line for line in md.splitlines() if line.startswith("| problem |"))
    assert header.endswith("| search: best version |")
    line = next(line for line in md.splitlines() if line.startswith("| 30_Softsign |"))
    assert f"{row['search_best'][:10]} {row['search_ratio']:.2f}× ±" in line
    assert f"({row['search_change']}) · 3 versions in the tree |" in line


def test_greedy_stays_the_default_and_a_bad_shape_is_refused_plainly(capsys):
    from cutegen.cli import main

    assert Budget().search == "greedy"
    with pytest.raises(SystemExit) as exit_:
        main(["suite", "run", str(LEVEL1 / "30_Softsign.py"), "--agent", "--out", "o", "--search", "beam:4"])
    assert exit_.value.code == 2
    assert "a search is `greedy` or `beam:WxK`" in capsys.readouterr().err
