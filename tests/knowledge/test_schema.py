"""The knowledge base parses, validates against its schema, and covers what the issue asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.knowledge import SIGNALS, WORKLOADS

ROOT = Path(__file__).resolve().parents[2]


def test_every_entry_is_valid(kb):
    assert kb.problems() == []


def test_catalog_size_and_coverage(kb):
    errors = [e for e in kb.entries if e.kind == "error"]
    assert len(errors) >= 25
    # compile-error classes of the corpus, the silent bugs, and runtime failures
    covered_patterns = {p for e in errors for p in e.recognize.mismatch}
    assert {"tail", "row-tail", "periodic", "tile-blocks", "everything", "nan", "scattered"} <= covered_patterns
    covered_verdicts = {v for e in errors for v in e.recognize.verdicts}
    assert {"mismatch", "cuda-error", "timeout", "launch-error", "constant-output", "inputs-mutated",
            "other-stream", "cached-results"} <= covered_verdicts
    codes = {c for e in errors for c in e.recognize.codes}
    assert {"cute-arch-trap", "cute-cp-async-registers", "ptxas-spill", "ptxas-stack"} <= codes


def test_every_corpus_kernel_has_a_catalog_entry(kb):
    claimed = {c for e in kb.entries for c in e.corpus}
    corpus = {p.stem for kind in ("errors", "silent") for p in (ROOT / "tests" / "corpus" / kind).glob("*.cu")}
    assert corpus <= claimed, sorted(corpus - claimed)


def test_error_entries_have_fix_pairs_and_related(kb):
    for e in kb.entries:
        if e.kind == "error":
            assert e.fix_before.strip() and e.fix_after.strip(), e.id
            assert e.related and all(r in kb.by_id for r in e.related), e.id


def test_idioms_name_existing_kernels_and_problems(kb):
    idioms = kb.idioms()
    assert {i.id for i in idioms} >= {"elementwise-vec128", "row-reduction", "gemm-sm80-mainloop", "gemm-sm90-tma-wgmma",
                                     "swizzle-smem-layouts", "gemm-epilogue-fused", "gemm-sm90-pipelined",
                                     "gemm-sm90-warpspecialized", "gemm-sm90-persistent-cooperative",
                                     "gemm-sm90-persistent-pingpong"}
    for i in idioms:
        assert (ROOT / i.kernel).is_file(), i.kernel
        assert (ROOT / i.problem).is_file(), i.problem
        assert i.when and i.pitfalls



def test_the_hopper_gemm_ladder_is_walkable_by_next(kb):
    """rung 0 (mma.sync) -> TMA+WGMMA -> pipelined -> warp-specialized -> persistent: each rung says its
    figure (or `pending`) and is retrieved by the profiler signal its predecessor leaves."""
    ladder, entry = [], kb.by_id["gemm-sm80-mainloop"]
    while entry is not None and len(ladder) < 10:
        ladder.append(entry.id)
        assert entry.measured, entry.id
        entry = kb.by_id.get(entry.next) if entry.next else None
    assert ladder == ["gemm-sm80-mainloop", "gemm-sm90-tma-wgmma", "gemm-sm90-pipelined", "gemm-sm90-warpspecialized",
                      "gemm-sm90-persistent-cooperative", "gemm-sm90-persistent-pingpong"]
    for before, after in zip(ladder, ladder[1:]):
        assert kb.by_id[after].signals, after
        assert "## Next rung" not in kb.by_id[before].pitfalls and "Next rung" in kb.by_id[before].sections, before
    top = kb.search(signals=[{"name": "mma-sync-not-wgmma"}], source="SM80_16x8x16_F32BF16BF16F32_TN gemm", k=3)
    assert "gemm-sm90-tma-wgmma" in [h.entry.id for h in top]

@pytest.mark.parametrize("workload", WORKLOADS)
def test_menus(kb, workload):
    items = kb.menu(workload)
    assert len(items) >= 3
    for item in items:
        assert item.preconditions and item.expected_effect and item.verify and item.signals
        assert set(item.signals) <= set(SIGNALS)


@pytest.mark.parametrize("signal", SIGNALS)
def test_every_profiler_signal_has_advice(kb, signal):
    advice = kb.advice_for_signal(signal)
    assert advice, signal
    assert all(a.kind in ("error", "optimization", "idiom") for a in advice)


def test_load_is_cached_and_overridable(kb, tmp_path, monkeypatch):
    import shutil

    from cutegen.knowledge import ENV, KnowledgeBase

    assert KnowledgeBase.load() is kb
    copy = tmp_path / "kb"
    shutil.copytree(kb.root, copy)
    (copy / "errors" / "copy-rank-mismatch.md").unlink()
    monkeypatch.setenv(ENV, str(copy))
    other = KnowledgeBase.load()
    assert other is not kb and "copy-rank-mismatch" not in other.by_id


def test_a_bad_entry_is_reported_with_its_file(tmp_path):
    pytest.importorskip("yaml")
    from cutegen.knowledge.loader import KnowledgeError, parse_entry

    bad = tmp_path / "bad.md"
    bad.write_text("---\nid: x\nkind: error\nunknown_key: 1\n---\ntext\n")
    with pytest.raises(KnowledgeError, match="bad.md.*unknown_key"):
        parse_entry(bad)


def test_every_stall_reason_has_advice_in_one_signal(kb):
    """The hot-line hover and the Optimize prompt quote it (profile lens); kb.problems() checks the same."""
    from cutegen.profiler.stalls import MEANINGS

    for reason in MEANINGS:
        signal, advice = kb.advice_for_stall(reason)
        assert signal in SIGNALS and len(advice) > 40, reason
    assert kb.advice_for_stall("long_scoreboard")[0] == "long-scoreboard-stalls"
    assert kb.advice_for_stall("no-such-reason") is None
