"""Where results sit in the editor: CodeLens above a declaration's first line (never between the lines of
`__global__ void __launch_bounds__(…)` and the name), and a hover whose explanation fits (a tight list of the
bindings, short sentences as lines of one paragraph)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from cutegen.diagnostics import condense, parse_log
from cutegen.lsp import hover, kernels
from lsp_helpers import open_file
from tests.support.paths import CORPUS

SPLIT = """#include <cuda_runtime.h>

// a kernel whose declaration spans three lines
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
scale_kernel(float* y, int n) {
  if (threadIdx.x < n) y[threadIdx.x] *= 2.f;
}

extern "C" int
cutegen_forward(float* y, int n) { scale_kernel<128><<<1, 128>>>(y, n); return 0; }
"""


def test_anchors_know_the_first_line_of_their_declaration():
    scale, launcher = kernels.anchors(SPLIT)
    assert (scale.name, scale.line, scale.top) == ("scale_kernel", 5, 3)  # `template <int kThreads>`
    assert (launcher.name, launcher.line, launcher.top) == ("cutegen_forward", 10, 9)
    (one_line,) = kernels.anchors("__global__ void k(float* p) {}\n")
    assert one_line.top == one_line.line == 0


@pytest.mark.asyncio
async def test_code_lenses_sit_above_the_declaration_not_inside_it(client, workspace):
    path = workspace / "split.cu"
    path.write_text(SPLIT)
    uri = open_file(client, path)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    lines = sorted({lens.range.start.line for lens in lenses})
    assert lines == [3, 9], [(lens.range.start.line, lens.command.title) for lens in lenses]


def _copy_rank_mismatch():
    log = (CORPUS / "logs" / "copy_rank_mismatch.log").read_text()
    lines = (CORPUS / "errors" / "copy_rank_mismatch.cu").read_text().splitlines()
    return condense(parse_log(log), "tests/corpus/errors/copy_rank_mismatch.cu",
                    lambda f: not f.startswith("$CUTLASS_INCLUDE"), lambda f: lines)[0]


def test_the_hover_explanation_is_compact_and_complete():
    d = _copy_rank_mismatch()
    shown = hover.compact(d.explanation)
    bindings = [line for line in d.explanation.split("\n\n") if line.startswith("- `")]
    assert len(bindings) == 7
    assert "\n".join(bindings) in shown  # one tight list: no paragraph gap between bindings
    assert shown.count("\n\n") <= 4, shown  # was one gap per binding and per sentence: 16
    for text in ("**CopyAtom rank-mismatch.**", "Raised inside `cute::copy`", "Asserted at `cute/algorithm/copy.hpp:193`",
                 "8 more error(s) on this line"):
        assert text in shown
    assert hover.compact(d.explanation) in hover.diagnostic_markdown(d)
