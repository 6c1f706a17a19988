"""The patch matcher: the corpus of imperfect diffs, re-basing, and minimal editor edits."""

from __future__ import annotations

import pytest

from cutegen.agent.patch import apply_diff, apply_reply, unified
from tests.agent.diff_corpus import DIFFS, cases, judge

CASES = cases()


def test_the_corpus_covers_both_sides():
    assert sum(c.expect == "ok" for c in CASES) >= 25 and sum(c.expect == "reject" for c in CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_case(case):
    good, why, p = judge(case)
    assert good, f"{case.description}: {why} (notes: {p.notes})"
    if p.ok:  # the canonical diff re-applies exactly: what is shown is what is applied
        again = apply_diff(p.diff, case.base_text, case.base)
        assert again.ok and again.new_text == p.new_text


def test_a_verified_change_rebases_onto_edits_elsewhere():
    base = (DIFFS / "base" / "slow.cu").read_text()
    new = base.replace("kBlockThreads = 64;", "kBlockThreads = 256;")
    diff = unified(base, new, "slow.cu")
    edited = "// my note at the top\n" + base.replace("return (int)cudaGetLastError();\n}", "return (int)cudaGetLastError();  // done\n}")
    moved = apply_diff(diff, edited, "slow.cu", local=False)
    assert moved.ok
    assert moved.new_text.startswith("// my note at the top\n") and "// done" in moved.new_text
    assert "kBlockThreads = 256;" in moved.new_text


def test_a_change_whose_lines_were_edited_does_not_rebase():
    base = (DIFFS / "base" / "slow.cu").read_text()
    diff = unified(base, base.replace("kBlockThreads = 64;", "kBlockThreads = 256;"), "slow.cu")
    edited = base.replace("kBlockThreads = 64;", "kBlockThreads = 96;")
    assert not apply_diff(diff, edited, "slow.cu", local=False).ok


def test_empty_or_garbage_replies():
    for reply in ("", "```\n```", "@@ @@\n", "--- a/x\n+++ b/x\n"):
        assert not apply_reply(reply, "int x;\n", "k.cu").ok


def test_minimal_edits_touch_only_changed_lines():
    pytest.importorskip("lsprotocol")
    from cutegen.lsp.patches import minimal_edits

    old = "a\nb\nc\nd\n"
    edits = minimal_edits(old, "a\nB\nc\nd\ne\n")
    assert [(e.range.start.line, e.range.end.line, e.new_text) for e in edits] == [(1, 2, "B\n"), (4, 4, "e\n")]
    # A last line without a newline ends at its UTF-16 length (× is one code unit, 𝄞 two).
    (edit,) = minimal_edits("x\ny ×𝄞", "x\nz\n")
    assert (edit.range.start.line, edit.range.end.line, edit.range.end.character) == (1, 1, 5)
    assert _apply("x\ny ×𝄞", [edit]) == "x\nz\n"


def _apply(text: str, edits) -> str:
    """Apply LSP edits (UTF-16 positions) the way an editor does: from the last to the first."""
    lines = text.splitlines(keepends=True)

    def offset(pos):
        before = "".join(lines[:pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units, i = 0, 0
        while i < len(line) and units < pos.character:
            units += len(line[i].encode("utf-16-le")) // 2
            i += 1
        return len(before) + i

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


def test_changes_of_two_formats_merge_only_when_they_agree():
    from cutegen.agent.patch import merge_changes

    base = "a\nb\nc\nd\n"
    assert merge_changes(base, "a\nB\nc\nd\n", "a\nB\nc\nd\n") == "a\nB\nc\nd\n"  # the same change once
    assert merge_changes(base, "a\nB\nc\nd\n", "a\nb\nc\nD\n") == "a\nB\nc\nD\n"  # different lines: both
    assert merge_changes(base, "a\nB\nc\nd\n", "a\nX\nc\nd\n") is None  # one line, two contents
    assert merge_changes(base, "a\nb\nnew\nc\nd\n", "a\nb\nother\nc\nd\n") is None  # two inserts at one point
    assert merge_changes(base, "a\nb\nnew\nc\nd\n", "a\nb\nC\nd\n") is None  # an insert where the other changes
    assert merge_changes(base, "a\nb\nc\nd", "a\nB\nc\nd\n") == "a\nB\nc\nd"  # the final newline is a change too
