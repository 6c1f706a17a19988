"""Diagnostics end to end: a real nvcc check of a broken CuTe kernel, then of its fix."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_helpers import errors, needs_nvcc, open_file, publications, replace_text, save, until
from lsp_kernels import BROKEN_LINE, KERNEL_LINE, ROOT, broken, fixed

pytestmark = [pytest.mark.asyncio, needs_nvcc]


async def test_broken_kernel_then_fix(client, workspace):
    path = workspace / "row_sum.cu"
    path.write_text(broken("row_sum"))
    uri = open_file(client, path)

    first = await until(lambda: publications(client, uri), what="diagnostics for the broken kernel")
    assert first[0].version == 1
    (error,) = errors(first[0].diagnostics)
    assert error.range.start.line == BROKEN_LINE
    assert ROOT in error.message and error.source == "cutegen"
    assert error.data["root"] == ROOT and error.data["api"] == "cute::make_tensor"
    assert any(r.location.uri.endswith("cute/tensor_impl.hpp") for r in error.related_information)
    assert (workspace / ".cutegen" / "runs").is_dir()  # the check's run record, in the workspace root

    # Hover over the diagnostic: the explanation, with the header as a link.
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=BROKEN_LINE, character=error.range.start.character + 4)))
    assert ROOT in hover.contents.value and "Header comment" in hover.contents.value
    assert "tensor_impl.hpp" in hover.contents.value and "file://" in hover.contents.value
    # ... and the knowledge base's diagnosis with its before/after fix (an exact pattern match).
    assert "(register tensor sized at run time)" in hover.contents.value and "Before:" in hover.contents.value

    # A quick fix appears only once the agent holds a verified patch; no LLM is configured here
    # (tests/agent/test_lsp_agent.py covers the verified fix), so the lightbulb offers what works
    # offline: the knowledge base's diagnosis (tests/lsp/test_code_actions.py runs it). The diagnostic
    # carries its data.
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=error.range,
        context=types.CodeActionContext(diagnostics=[error])))
    assert [a.command.command for a in actions] == ["cutegen.server.diagnose"]
    assert error.data["code"] == "cute-static-assert"

    # CodeLens above the kernel (it does not compile yet), with the run commands.
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    titles = {lens.command.title for lens in lenses if lens.range.start.line == KERNEL_LINE}
    assert "does not compile (1 error)" in titles and {"Test", "Profile", "Optimize"} <= titles

    # Fix it: change + save. The errors clear, tagged with the new version.
    path.write_text(fixed("row_sum"))
    replace_text(client, uri, fixed("row_sum"), version=2)
    save(client, uri)
    second = await until(lambda: [p for p in publications(client, uri) if p.version == 2],
                         what="diagnostics for the fixed kernel")
    assert errors(second[0].diagnostics) == []
    assert all(p.version in (1, 2) for p in publications(client, uri))

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    kernel_titles = [lens.command.title for lens in lenses if lens.range.start.line == KERNEL_LINE]
    assert any("regs" in t and "smem" in t and "no spills" in t for t in kernel_titles), kernel_titles
    assert client.code_lens_refreshes >= 1
