"""Retrieval: for each error class of the corpus the right entry is in the top 3 (real check tier); runtime
failures (real mismatch reports from the harness's comparator, verdicts) and profiler signals find their entries;
API signatures come from the installed CUTLASS headers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.model import Diagnostic, Severity
from tests.support.corpus import corpus

ROOT = Path(__file__).resolve().parents[2]


def _expected(kb, stem):
    owners = [e.id for e in kb.entries if stem in e.corpus]
    assert len(owners) == 1, (stem, owners)
    return owners[0]


@pytest.mark.parametrize("case", corpus("errors"), ids=repr)
def test_corpus_error_retrieves_its_entry_in_top3(kb, builder, case):
    result = builder.run(Tier.CHECK, case.path)
    first = result.errors[0]
    hits = kb.search(diagnostic=first, k=3)
    ids = [h.entry.id for h in hits]
    assert _expected(kb, case.path.stem) in ids, (first.message, [h.to_json() for h in hits])
    # the entry's own recognizer fires on this real compiler output
    assert kb.recognizes(_expected(kb, case.path.stem), diagnostic=first)
    # a dict (run records, LSP data) works like the object
    assert [h.entry.id for h in kb.search(diagnostic=first.to_json(), k=3)] == ids


@pytest.mark.parametrize("case", corpus("silent"), ids=repr)
def test_corpus_silent_bug_warning_retrieves_its_entry(kb, arch_builder, case):
    result = arch_builder(case.arch).run(Tier.CHECK, case.path)
    warning = next(d for d in result.diagnostics if d.severity is Severity.WARNING and case.expect_warning in d.message)
    hits = kb.search(diagnostic=warning, k=3)
    expected = _expected(kb, case.path.stem)
    assert expected in [h.entry.id for h in hits], [h.to_json() for h in hits]
    assert kb.recognizes(expected, diagnostic=warning)


def test_hit_fields_and_hover_markdown(kb):
    d = Diagnostic(file="k.cu", line=3, col=1, end_col=9, severity=Severity.ERROR, code="cute-static-assert",
                   message="CopyAtom rank-mismatch. — in cute::copy", root="CopyAtom rank-mismatch.",
                   data={"api": "cute::copy", "header": "cute/algorithm/copy.hpp:193"})
    (hit,) = kb.search(diagnostic=d, k=1)
    assert hit.entry.id == "copy-rank-mismatch" and hit.score > 10 and "exact" in hit.why
    assert hit.entry.fix_before and hit.entry.fix_after and hit.entry.related and hit.entry.explanation
    md = kb.diagnosis_markdown(hit)
    assert "```cpp" in md and "make_fragment_like" in md and len(md) < 4000
    assert hit.why not in md and "bm25" not in md and "exact:" not in md  # retrieval's trace is not user text


# -- runtime failures: real reports from the harness's comparator -----------------------------------------------

def _mismatch(kind: str):
    torch = pytest.importorskip("torch")
    from cutegen.harness.compare import compare

    ref = torch.randn(64, 1000, generator=torch.Generator().manual_seed(0))
    out = ref.clone()
    if kind == "tail":
        out.view(-1)[-300:] = float("nan")
    elif kind == "row-tail":
        out[:, -8:] += 1.0
    elif kind == "periodic":
        out.view(-1)[3::4] *= 2.0
    elif kind == "tile-blocks":
        out.view(-1)[1024:2048] = 0.5
    elif kind == "everything":
        out = ref.t().contiguous().view(64, 1000) * 1.5 + 1.0
    elif kind == "nan":
        g = torch.Generator().manual_seed(1)
        idx = torch.randperm(out.numel(), generator=g)[:500]
        out.view(-1)[idx] = float("nan")
    elif kind == "scattered":
        g = torch.Generator().manual_seed(2)
        idx = torch.randperm(out.numel(), generator=g)[:500]
        out.view(-1)[idx] += 3.0
    m = compare(out, ref, 1e-4, 1e-4)
    assert m is not None and m.pattern == kind, (kind, m and m.pattern, m and m.message)
    return m.to_json()


RUNTIME = {
    "tail": "mismatch-tail", "row-tail": "mismatch-tail", "periodic": "mismatch-periodic",
    "tile-blocks": "mismatch-tile-blocks", "everything": "mismatch-everything", "nan": "mismatch-nan-unwritten",
    "scattered": "mismatch-scattered-race",
}


@pytest.mark.parametrize("pattern", list(RUNTIME))
def test_mismatch_pattern_retrieves_its_entry(kb, pattern):
    report = _mismatch(pattern)
    hits = kb.search(mismatch=report, verdict="mismatch", k=3)
    assert hits[0].entry.id == RUNTIME[pattern], [h.to_json() for h in hits]
    assert kb.recognizes(RUNTIME[pattern], mismatch=report, verdict="mismatch")


VERDICTS = [  # verdict, message as the harness/worker words it, expected entry
    ("cuda-error", "CUDA error: an illegal memory access was encountered", "illegal-address"),
    ("cuda-error", "CUDA error: misaligned address", "misaligned-address"),
    ("timeout", "no result within 120 s: the kernel hangs (or is far too slow); the worker was killed and will restart",
     "kernel-timeout"),
    ("launch-error", "cutegen_forward returned 1 (a cudaError_t: cudaErrorInvalidValue)", "launch-error-config"),
    ("constant-output", "output 0 is zero everywhere; the reference is not", "constant-output"),
    ("other-stream", "outputs changed after the call's stream was done: work runs on another stream and is not "
                     "finished when cutegen_forward returns", "other-stream"),
    ("inputs-mutated", "the kernel wrote into its inputs (they must stay unchanged)", "inputs-mutated"),
    ("cached-results", "new input values gave bit-identical outputs to the previous call: results are cached across "
                       "calls instead of computed", "cached-results"),
]


@pytest.mark.parametrize("verdict,message,expected", VERDICTS, ids=[f"{v[0]}:{v[2]}" for v in VERDICTS])
def test_verdict_retrieves_its_entry(kb, verdict, message, expected):
    hits = kb.search(verdict=verdict, message=message, k=3)
    assert hits[0].entry.id == expected, [h.to_json() for h in hits]


def test_source_scan_finds_silent_wrong_operand(kb):
    src = (ROOT / "cute_knowledge" / "errors" / "wrong-operand-equal-shapes.md").read_text()
    before = kb.by_id["wrong-operand-equal-shapes"].fix_before
    hits = kb.search(mismatch={"pattern": "everything", "message": "nearly every element"}, verdict="mismatch",
                     source=before, k=3)
    assert hits[0].entry.id == "wrong-operand-equal-shapes", [h.to_json() for h in hits]
    assert "source" in hits[0].why and src


def test_signals_rank_menu_items(kb):
    hits = kb.search(signals=[{"name": "smem-bank-conflicts", "evidence": "4.1-way conflicts on ld.shared"}], k=3)
    assert {"smem-swizzle", "swizzle-smem-layouts"} & {h.entry.id for h in hits}
    hits = kb.search(signals=[{"name": "wgmma-serialized", "evidence": "C7510"}], k=3)
    assert hits[0].entry.id == "gemm-warp-specialization"
    assert [e.id for e in kb.advice_for_signal("spills")][0] == "register-spills"


def test_menu_items_carry_their_fields(kb):
    for item in kb.menu("gemm"):
        assert item.workload == "gemm" and item.preconditions and item.expected_effect and item.verify and item.signals


@pytest.mark.parametrize("name,needle", [("make_tiled_copy", "ValLayout"), ("local_tile", "Tiler"),
                                         ("partition_fragment_A", "ATensor"), ("make_tma_atom", "CopyOp"),
                                         ("tile_to_shape", "TrgShape")])
def test_api_signature_from_installed_headers(kb, toolchain, name, needle):
    sig = kb.api_signature(name)
    assert sig and f"{name}(" in sig and needle in sig and sig.startswith("// cute/"), sig


def test_api_signature_unknown_name(kb, toolchain):
    assert kb.api_signature("no_such_cute_function_xyz") is None



def test_the_index_does_not_wake_jax_which_would_claim_the_gpu(tmp_path):
    """bm25s imports jax where it is installed and runs a jax op at import; on a GPU machine jax then claims 75 %
    of the card's memory in the server's process (seen on the H200). A jax package that records its import stands
    in for an installed one: searching the knowledge base must not import it, and retrieval still works."""
    import os
    import subprocess
    import sys

    (tmp_path / "jax").mkdir()
    marker = tmp_path / "jax-was-imported"
    (tmp_path / "jax" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (tmp_path / "jax" / "lax.py").write_text("def top_k(x, k):\n    return x[:k], list(range(k))\n")
    script = ("import sys\n"
              "from cutegen.knowledge import KnowledgeBase\n"
              "hits = KnowledgeBase.load().search(verdict='mismatch', k=3)\n"
              "print(len(hits), 'jax' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    hits, jax_loaded = out.stdout.split()
    assert int(hits) > 0, "retrieval found nothing"
    assert jax_loaded == "False" and not marker.exists(), "bm25s imported jax"
