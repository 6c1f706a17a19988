"""The lightbulb without an LLM: the knowledge base's diagnosis (readable Markdown, no retrieval trace)
and, in a client that can open a settings page, "configure an LLM for verified fixes"."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_helpers import errors, needs_nvcc, open_file, publications, until
from lsp_kernels import broken

pytestmark = [pytest.mark.asyncio, needs_nvcc]


@pytest.mark.client_name("Visual Studio Code")
async def test_offline_lightbulb_explains_and_offers_llm_settings(client, workspace):
    path = workspace / "row_sum.cu"
    path.write_text(broken("offline-actions"))
    uri = open_file(client, path)
    (published,) = await until(lambda: publications(client, uri), what="diagnostics")
    (error,) = errors(published.diagnostics)

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=error.range,
        context=types.CodeActionContext(diagnostics=[error])))
    explain, configure = actions
    assert explain.title == "CuTeGen: explain this error (knowledge base)"
    assert configure.title == "CuTeGen: configure an LLM for verified fixes"
    assert configure.command.command == "workbench.action.openSettings"
    assert list(configure.command.arguments) == ["cutegen.llm"]  # filters the settings page to llmBaseUrl, llmModel, ...

    # Running the explanation works offline and answers Markdown for the client to render.
    reply = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=explain.command.command, arguments=explain.command.arguments))
    assert reply["ok"] and reply["source"] == "knowledge"
    diagnosis = reply["diagnosis"]
    assert diagnosis.startswith("**Dynamic owning tensors not supported (register tensor sized at run time)**")
    assert "```cpp" in diagnosis and "bm25" not in diagnosis and "exact:" not in diagnosis
