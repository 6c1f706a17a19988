"""The language server with its workspace (and `.cutegen/`) on a full disk (a real tmpfs, filled): the
diagnostics nvcc produced are published, one warning says the record could not be saved, and nothing else."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_helpers import errors, needs_nvcc, open_file, publications, until
from tests.agent.provider_cases import BROKEN
from tests.support.small_disk import fill, small_disk

pytestmark = pytest.mark.asyncio


@pytest.fixture
def workspace(tmp_path):
    """The editor's folder on a small disk, filled once the kernel is there (the client fixture opens it)."""
    with small_disk(tmp_path / "ws", kib=512) as disk:
        (disk / ".git").mkdir()
        (disk / "broken.cu").write_text(BROKEN)
        fill(disk)
        yield disk


@needs_nvcc
async def test_a_full_disk_still_publishes_the_diagnostics_and_says_so_once(client, workspace):
    uri = open_file(client, workspace / "broken.cu")
    (published,) = await until(lambda: publications(client, uri), 120, "the diagnostics")
    (error,) = errors(published.diagnostics)
    assert 'identifier "HALF" is undefined' in error.message and error.range.start.line == 5
    warnings = await until(lambda: [m.message for m in client.messages if m.type == types.MessageType.Warning], 10,
                           "the warning")
    (warning,) = warnings
    assert "the check record of broken.cu was not saved" in warning and "no space left on the disk" in warning
    assert f"mounted at {workspace}" in warning
    assert not [m for m in client.log_messages if "Traceback" in m.message]
    assert (workspace / "broken.cu").read_text() == BROKEN
