"""Each new verdict, worded as the harness words it, retrieves its own knowledge-base entry first (what the editor's
diagnosis and the agent's prompt start from)."""

from __future__ import annotations

import pytest
import torch

from cutegen.harness import memory
from cutegen.harness.modelnew import refusal
from cutegen.harness.trial import _stream_verdict


def messages() -> list[tuple[str, str, str]]:
    out = torch.empty(4, 8)
    lazy = refusal(torch.randn(4, 8).as_subclass(type("Marked", (torch.Tensor,), {})), out, 0)
    expanded = refusal(torch.randn(1, 8).expand(4, 8), out, 0)
    cases = [(_stream_verdict(True, False, True), "inputs-not-awaited"),
             (_stream_verdict(False, True, True), "result-not-ready"),
             (_stream_verdict(True, True, True), "other-stream"),
             (lazy, "lazy-output"), (expanded, "expanded-output")]
    rows = [(f.verdict.value, f.message, entry) for f, entry in cases]
    rows.append(("output-aliases-input", "ModelNew returned (a view of) its input as the output: the result must be "
                                         "written to new memory", "output-aliases-input"))
    rows.append(("out-of-memory", memory.message(memory.Plan(12_884_901_888, 12_884_901_888), "cpu"), "out-of-memory"))
    return rows


@pytest.mark.parametrize("verdict,message,entry", messages(), ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "")
def test_the_verdict_retrieves_its_entry(verdict, message, entry):
    pytest.importorskip("yaml")
    pytest.importorskip("bm25s")
    from cutegen.knowledge import KnowledgeBase

    hits = KnowledgeBase.load().search(verdict=verdict, message=message, k=3)
    assert hits[0].entry.id == entry, [h.to_json() for h in hits]
