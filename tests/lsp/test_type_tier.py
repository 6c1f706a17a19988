"""The type tier in the editor: errors while typing from clang (`cutegen (typing)`), replaced on save by nvcc's
result, and quiet for a file where nvcc disagrees until the lines concerned are edited."""

from __future__ import annotations

import pytest

from lsp_helpers import errors, needs_nvcc, open_file, publications, replace_text, save, until
from lsp_kernels import BROKEN_LINE, ROOT as ROOT_CAUSE, broken, fixed
from tests.support.paths import CORPUS

pytestmark = [pytest.mark.asyncio, needs_nvcc]
pytest.importorskip("clang.cindex", reason="the type tier needs the libclang-ng wheel")

TYPING, NVCC = "cutegen (typing)", "cutegen"


def of(client, uri, version, source):
    return [p for p in publications(client, uri) if p.version == version and all(d.source == source for d in p.diagnostics)]


@pytest.mark.cutegen_settings({"checkOnType": True, "debounceMs": 200})
async def test_errors_while_typing_then_nvcc_on_save(client, workspace):
    path = workspace / "typing.cu"
    path.write_text(fixed("type-tier"))
    uri = open_file(client, path)
    text = broken("type-tier")
    for version in range(2, 6):  # a burst: the older parses are killed, only the last text is reported
        replace_text(client, uri, text + "//" + "x" * version + "\n", version=version)
    typed = await until(lambda: [p for p in publications(client, uri) if p.version == 5 and p.diagnostics], 120,
                        "typing diagnostics of version 5")
    assert {p.version for p in publications(client, uri)} <= {1, 5}  # versions 2-4 never published
    first = errors(typed[0].diagnostics)[0]
    assert (first.range.start.line, first.source) == (BROKEN_LINE, TYPING)
    assert ROOT_CAUSE in first.message

    path.write_text(text + "//xxxxx\n")
    save(client, uri)
    checked = await until(lambda: [p for p in publications(client, uri) if p.version == 5 and p.diagnostics
                                   and p.diagnostics[0].source == NVCC], 180, "nvcc's diagnostics on save")
    assert errors(checked[-1].diagnostics)[0].range.start.line == BROKEN_LINE
    assert all(d.source == NVCC for d in checked[-1].diagnostics)  # replaced, not merged


@pytest.mark.cutegen_settings({"checkOnType": True, "debounceMs": 200})
async def test_nvcc_wins_and_typing_stays_quiet_until_the_line_changes(client, workspace):
    """clang lets device code call std::max (its CUDA wrappers make it __host__ __device__); nvcc refuses it."""
    source = (CORPUS / "errors" / "constexpr_std_max.cu").read_text()
    path = workspace / "row_max.cu"
    path.write_text(source)
    uri = open_file(client, path)
    await until(lambda: [p for p in publications(client, uri) if p.version == 1 and errors(p.diagnostics)
                         and p.diagnostics[0].source == NVCC], 180, "nvcc's error on open")
    await until(lambda: [m for m in client.log_messages if "nvcc wins" in m.message], 120, "the disagreement")

    replace_text(client, uri, source + "// an edit elsewhere\n", version=2)
    await until(lambda: [m for m in client.log_messages if "version 2 withheld" in m.message], 120,
                "the typing result of version 2")
    assert not [p for p in publications(client, uri) if p.version == 2]  # nvcc's error stays as published

    edited = source.replace("m = std::max(m, gRow(j));", "m = fmaxf(m, gRow(j));")
    assert edited != source
    replace_text(client, uri, edited, version=3)
    resumed = await until(lambda: [p for p in publications(client, uri) if p.version == 3], 120, "typing of version 3")
    assert errors(resumed[0].diagnostics) == []
