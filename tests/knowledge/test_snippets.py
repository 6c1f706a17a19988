"""Every snippet in the knowledge base is built with the check tier: a fix_before fails (or warns) with its own
entry's recognizer matching, a fix_after compiles clean, and every idiom kernel compiles clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.model import Severity

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def outcomes(kb, arch_builders):
    from cutegen.knowledge.snippets import check_all

    builders = {k: v for k, v in arch_builders.items() if k != "_state"}
    entries = [e for e in kb.entries if e.fix_before or e.fix_after]
    return {(o.entry, o.side): o for o in check_all(kb, entries, builders, arch_builders["_state"])}


def _snippet_ids():
    from cutegen.knowledge.loader import knowledge_root, load_raw

    try:
        raw = load_raw(knowledge_root())
    except Exception:  # no yaml: the kb fixture skips
        return []
    return [(e.id, side) for e in raw.entries for side, code in (("before", e.fix_before), ("after", e.fix_after))
            if code.strip()]


@pytest.mark.parametrize("key", _snippet_ids(), ids=lambda k: f"{k[0]}.{k[1]}")
def test_snippet_does_what_its_entry_claims(outcomes, key):
    o = outcomes[key]
    assert o.ok, o.detail


def test_error_fix_before_fails_with_its_own_pattern(kb, outcomes):
    """The strong form: every compile-time error entry's broken snippet is recognized by that entry."""
    for e in kb.entries:
        if e.kind == "error" and e.before_expect in ("fail", "warn"):
            assert outcomes[(e.id, "before")].ok, outcomes[(e.id, "before")].detail


def _idiom_kernels():
    from cutegen.knowledge.loader import knowledge_root, load_raw

    try:
        raw = load_raw(knowledge_root())
    except Exception:
        return []
    kernels = sorted({e.kernel for e in raw.entries if e.kernel})
    # The CUTLASS-collective GEMM rungs take 15-90 s each to check: slow, not every quick run's cost.
    return [pytest.param(k, marks=pytest.mark.slow) if "gemm_sm90_common.cuh" in (ROOT / k).read_text() else k
            for k in kernels]


@pytest.mark.parametrize("kernel", _idiom_kernels())
def test_idiom_kernel_compiles_clean(builder, kernel):
    # the shared builder has room for CUTLASS's collectives (a 600 s check timeout): the cooperative GEMM's check
    # took 92 s on a busy 2-core machine, close to the editor's 120 s default
    result = builder.run(Tier.CHECK, ROOT / kernel)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.severity is not Severity.INFO], [d.format() for d in result.diagnostics]
