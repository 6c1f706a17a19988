"""Diagnostics are tagged with the document version, and a stale version is never published."""

from __future__ import annotations

import pytest

from lsp_helpers import errors, needs_nvcc, open_file, publications, replace_text, save, until
from lsp_kernels import BROKEN_LINE, broken, fixed

pytestmark = [pytest.mark.asyncio, needs_nvcc]


async def test_result_for_an_edited_version_is_dropped(client, workspace):
    path = workspace / "stale.cu"
    path.write_text(broken("stale"))
    uri = open_file(client, path)
    save(client, uri)  # replaces the check started by didOpen
    replace_text(client, uri, fixed("stale"), version=2)  # typing goes on: checkOnType is off
    await until(lambda: [m for m in client.log_messages if "version 1 dropped" in m.message], 60,
                "the check of version 1 to end")
    assert publications(client, uri) == []


@pytest.mark.cutegen_settings({"checkOnType": True, "debounceMs": 300})
async def test_check_on_type_debounces_and_publishes_the_latest_version(client, workspace):
    path = workspace / "typing.cu"
    path.write_text(fixed("typing"))
    uri = open_file(client, path)
    text = broken("typing")
    for version in range(2, 6):  # a burst of edits within the debounce window: one check, of v5
        replace_text(client, uri, text + "//" + "x" * version + "\n", version=version)
    published = await until(lambda: publications(client, uri), 60, "diagnostics of the typed text")
    assert [p.version for p in published] == [5]
    assert errors(published[0].diagnostics)[0].range.start.line == BROKEN_LINE
