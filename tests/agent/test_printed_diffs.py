"""Every diff CuTeGen prints applies as printed: GNU `patch -p1` (no fuzz) and `git apply` turn the file the
reply was for into exactly the file CuTeGen placed, for every placed case of the replay corpus
(tests/agent/replays/) and of the diff corpus (tests/agent/diffs/), files without a final newline and
CRLF files included; a generated kernel's diff creates the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cutegen.agent.patch import unified
from tests.agent import diff_corpus, replay_corpus

pytestmark = pytest.mark.skipif(not (shutil.which("patch") and shutil.which("git")), reason="needs GNU patch and git")

PLACED = [c for c in replay_corpus.replays() if c.expect == "placed"]
OK_DIFFS = [c for c in diff_corpus.cases() if c.expect == "ok"]


def _assert_applies(diff: str, base_text: str | None, name: str, expected: str) -> None:
    for tool, (applied, result) in replay_corpus.apply_externally(diff, base_text, name).items():
        assert applied, f"{tool} refuses the printed diff: {result}\n{diff}"
        assert result == expected, f"{tool} makes another file of it than CuTeGen placed\n{diff}"


@pytest.mark.parametrize("case", PLACED, ids=lambda c: c.name)
def test_a_replay_cases_printed_diff_applies(case):
    good, why, p = replay_corpus.judge(case)
    assert good, why
    _assert_applies(p.diff, case.base_text, Path(case.base).name, p.new_text)


@pytest.mark.parametrize("case", OK_DIFFS, ids=lambda c: c.name)
def test_a_diff_corpus_cases_printed_diff_applies(case):
    good, why, p = diff_corpus.judge(case)
    assert good, why
    _assert_applies(p.diff, case.base_text, case.base, p.new_text)


@pytest.mark.parametrize("before, after", [
    ("int a;\nint b;", "int a;\nint c;"),  # no final newline on either side
    ("int a;\nint b;\n", "int a;\nint b;"),  # the change removes the final newline
    ("int a;\nint b;", "int a;\nint b;\n"),  # ... or adds it
    ("int a;\r\nint b;\r\n", "int a;\r\nint c;\r\n"),  # CRLF lines stay CRLF in the diff
    ("", "int a;\n"),  # a new file: created by both tools
])
def test_edge_line_endings_apply(before, after):
    diff = unified(before, after, "k.cu")
    _assert_applies(diff, before or None, "k.cu", after)
