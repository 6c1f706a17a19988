"""One-line messages: never cut inside a type, never cut without an ellipsis, the decisive part kept."""

from __future__ import annotations

import pytest

from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.resources import kernel_instantiation, short_kernel_name
from cutegen.diagnostics.text import fit
from cutegen.model import KernelResources
from tests.support.paths import CORPUS
from tests.support.corpus import corpus

LIBRARY = "$CUTLASS_INCLUDE"
RECORDED = [c for c in corpus("errors") if (CORPUS / "logs" / f"{c.path.stem}.log").exists()]


def _diagnostics(case):
    log = (CORPUS / "logs" / f"{case.path.stem}.log").read_text()
    rel = str(case.path.relative_to(CORPUS.parent.parent))

    def lines(file: str) -> list[str]:
        p = CORPUS.parent.parent / file
        return p.read_text().splitlines() if p.is_file() else []
    return condense(parse_log(log), rel, lambda f: not f.startswith(LIBRARY), lines)


def _balanced(text: str) -> bool:
    return all(text.count(o) == text.count(c) for o, c in ("()", "[]", "<>"))


@pytest.mark.parametrize("case", RECORDED, ids=repr)
def test_messages_are_whole_or_marked(case):
    for d in _diagnostics(case):
        assert len(d.message) <= 240
        body = d.message.replace("<unknown-type>", "").replace("->", "")
        assert _balanced(body) or "…" in body, d.message
        for line in d.explanation.splitlines():
            assert len(line) < 400 or "**" in line  # the bold root is whole; listed follow-ons are cut


def test_gemm_rank_mismatch_shows_the_mismatching_argument():
    (case,) = [c for c in RECORDED if c.path.stem == "gemm_rank_mismatch"]
    (d,) = [x for x in _diagnostics(case) if x.severity.value == "error"]
    # C, A, B, C: A (the third) keeps its PIPE mode: rank 4 where B and C have rank 3.
    assert "Tensor<((_2,_2,_2),_2,_2,_2)>" in d.message
    assert d.message.endswith("…)")


def test_fit_cuts_between_types_with_an_ellipsis():
    text = "no match; argument types are: (Tensor<float, (_2,_4)>, Tensor<half, (_2,_2,_2)>, Tensor<half, (_8,_8)>)"
    short = fit(text, 90)
    assert short.endswith("…") and len(short) <= 90
    assert _balanced(short.removesuffix(" …") + ")")  # cut between the arguments, not inside one
    assert fit("short", 90) == "short"


def test_resource_lines_name_the_instantiation():
    readable = "void ns::elementwise_kernel<float, 512>(const float *, float *, int)"
    k = KernelResources(name=short_kernel_name(readable), mangled="_Z1k", arch="sm_90a", registers=24,
                        instantiation=kernel_instantiation(readable))
    assert k.name == "elementwise_kernel"  # what CodeLens matches a __global__ by
    assert k.summary().startswith("elementwise_kernel<float, 512>: 24 registers")
    cute = ("void gemm<cute::Layout<cute::tuple<cute::C<32>, cute::C<8>>, cute::tuple<cute::C<1>, cute::C<32>>>>"
            "(float *)")
    assert kernel_instantiation(cute) == "gemm<(_32,_8):(_1,_32)>"
    assert kernel_instantiation("void plain(float *)") == "plain"
