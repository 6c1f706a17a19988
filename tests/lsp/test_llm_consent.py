"""No LLM request without a user action on that endpoint (issue 53): the background fix waits until the user has
run an agent command against the same base URL on this machine (or turned `backgroundAgent` on), and the first
command to a new endpoint names it. The real server over stdio, the scripted OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from cutegen.lsp.command_ids import Command
from lsp_helpers import needs_nvcc, open_file, publications, until
from lsp_kernels import broken

pytestmark = [pytest.mark.asyncio, needs_nvcc]


def _kernel(root: Path, tag: str) -> Path:
    path = root / f"{tag}.cu"
    path.write_text(broken(tag))
    return path


@pytest.mark.replies([])
@pytest.mark.cutegen_settings({"backgroundAgent": False})
async def test_the_background_fix_waits_for_a_command_on_that_endpoint(client, workspace):
    url = client.scripted.url
    uri = open_file(client, _kernel(workspace, "consent-a"))
    await until(lambda: publications(client, uri), 120, "the check")
    await asyncio.sleep(3)  # a background fix would have sent its first request by now
    assert client.scripted.requests == []
    assert any(f"background fixes are off for the LLM endpoint {url}" in m.message for m in client.log_messages)

    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=Command.FIX.value, arguments=[{"uri": uri, "version": 1}]))
    sent = len(client.scripted.requests)
    assert sent > 0
    named = [m.message for m in client.messages if url in m.message]
    assert len(named) == 1 and "for the first time on this machine" in named[0]

    other = open_file(client, _kernel(workspace, "consent-b"))  # now the background fix may use it
    await until(lambda: publications(client, other), 120, "the second check")
    await until(lambda: len(client.scripted.requests) > sent, 60, "the background fix's request")
    assert len([m for m in client.messages if url in m.message]) == 1  # named once, not at every request
