"""The profile lens in a real language server (pytest-lsp over stdio): hot lines marked at their end, the hover of a
hot line, the CodeLens naming the hottest line, the picture, staleness after an edit, and the sanitizer's findings
as diagnostics. The records are made from the H200's captures (tests/profiler/fixtures) by the engine itself:
the softsign report folded through the line table of the same kernel built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_helpers import open_file, replace_text, save, until

from cutegen import records
from cutegen.compile import Tier
from cutegen.lsp.command_ids import Command
from cutegen.profiler.line_table import find_tool, read_line_table
from cutegen.profiler.lines import Folder, digest, fold, read_report, system_folders
from cutegen.profiler.sanitizer import condense, diagnostics, parse

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "profiler" / "fixtures"
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"


@pytest.fixture(scope="module")
def softsign_lines(builder) -> dict:
    """The softsign line profile (JSON) with the example's build standing for the workspace copy's."""
    pytest.importorskip("ncu_report")
    nvdisasm = find_tool("nvdisasm", [])
    if nvdisasm is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm)")
    build = builder.run(Tier.BUILD, SOFTSIGN)
    tables = read_line_table(Path(build.artifact), nvdisasm, find_tool("cuobjdump", []))
    data = read_report(FIXTURES / "softsign_lines.ncu-rep", None)
    return {"tables": tables, "data": data, "copy": str(Path(build.artifact).parent / SOFTSIGN.name),
            "system": system_folders(builder.toolchain)}


def _profiled(workspace: Path, lines: dict) -> Path:
    kernel = workspace / "softsign.cu"
    kernel.write_text(SOFTSIGN.read_text())
    profile = fold(lines["data"], lines["tables"], Folder({lines["copy"]: str(kernel)}, lines["system"]))
    records.write(workspace / ".cutegen", "profile", str(kernel),
                  {"verdict": "profiled", "message": "", "lines": profile, "kernel": str(kernel)})
    return kernel


async def _hints(client, uri: str, lines: int) -> dict[int, str]:
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=lines, character=0))))
    return {h.position.line + 1: h.label for h in hints or [] if "%" in str(h.label)}


async def _hover(client, uri: str, line: int) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line - 1, character=2)))
    return hover.contents.value if hover else ""


async def _lenses(client, uri: str) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))


async def test_hot_lines_are_marked_hovered_and_named(client, workspace, softsign_lines):
    kernel = _profiled(workspace, softsign_lines)
    text = kernel.read_text()
    uri = open_file(client, kernel, text)
    hints = await _hints(client, uri, len(text.splitlines()))
    assert hints[33] == "69 % · long_scoreboard" and hints[59] == "21 % · drain"
    assert sorted(hints) == [33, 52, 56, 59]  # the top 5 but line 45 (0.4 %): under 1 % is not marked
    # the hover of the stores' line: its reasons, what they mean, the knowledge base's advice, its SASS
    md = await _hover(client, uri, 59)
    assert "line 59: 21.3 % of the samples" in md
    assert "`drain`" in md and "stores to drain" in md and "persistent loop" in md
    assert "Copy_Atom&lt;UniversalCopy&lt;uint128_t&gt;&gt;" in md  # the advice's C++ survives Markdown
    assert "STG.E" in md and "Nsight Compute:" in md
    assert await _hover(client, uri, 20) == ""  # a comment line: not hot, no lens hover
    titles = [lens.command.title for lens in await _lenses(client, uri)]
    assert "hottest: line 33 (69 % · long_scoreboard) · 100 % on user lines" in titles
    assert "Profile Lines" in titles
    # the picture of the latest profile (no new run): a heat strip and a stall bar per hot line
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=Command.PROFILE_LINES.value, arguments=[{"uri": uri, "show": True}]))
    assert answer["ok"] and not answer["stale"] and "<svg" in answer["svg"]
    assert 'class="heat" data-line="33"' in answer["svg"] and 'data-line="59" data-reason="drain"' in answer["svg"]
    assert [h["line"] for h in answer["lines"][:3]] == [33, 59, 56]


async def test_an_edit_makes_the_profile_stale_never_misplaced(client, workspace, softsign_lines):
    kernel = _profiled(workspace, softsign_lines)
    text = kernel.read_text()
    uri = open_file(client, kernel, text)
    assert await _hints(client, uri, len(text.splitlines()))
    edited = "// a new first line: every hot line moves down by one\n" + text
    replace_text(client, uri, edited, 2)
    assert await _hints(client, uri, len(edited.splitlines())) == {}
    assert await _hover(client, uri, 60) == ""  # the old line 59, now line 60: not shown against either
    titles = [lens.command.title for lens in await _lenses(client, uri)]
    assert "line profile is stale (the file changed): Profile Lines" in titles
    assert not any(t.startswith("hottest:") for t in titles)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=Command.PROFILE_LINES.value, arguments=[{"uri": uri, "show": True}]))
    assert answer["stale"] and "STALE" in answer["svg"]
    # and a run on unsaved text is refused rather than profiling other text than the editor shows
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=Command.PROFILE_LINES.value, arguments=[uri]))
    assert not answer["ok"] and "save softsign.cu first" in answer["message"]


async def test_sanitizer_findings_show_at_their_line_and_go_when_the_file_changes(client, workspace):
    kernel = workspace / "smem_race.cu"
    text = (FIXTURES / "smem_race.cu").read_text()
    kernel.write_text(text)
    reports, errors = parse((FIXTURES / "sanitize_smem_race_racecheck.txt").read_text(), "racecheck")
    findings, unplaced = condense(reports, Folder({"/cache/smem_race.cu": str(kernel)}, ("/usr/",)), {})
    records.write(workspace / ".cutegen", "sanitize", str(kernel), {
        "verdict": "sanitizer-errors", "message": "1 error", "kernel": str(kernel), "diagnostics": diagnostics(findings),
        "sanitizer": {"findings": findings, "tools": {"racecheck": errors}, "unplaced": unplaced,
                      "digests": {str(kernel): digest(text)}}})
    uri = open_file(client, kernel, text)

    def race():
        return [d for d in client.diagnostics.get(uri, []) if d.code == "sanitizer-racecheck"]

    (d,) = await until(race, 120, "the racecheck finding")
    assert d.range.start.line == 7 and d.source == "compute-sanitizer"  # line 8: the read of the neighbour's slot
    assert any(r.location.range.start.line == 6 for r in d.related_information)  # the racing write, line 7
    assert any("thread (225,0,0)" in r.message for r in d.related_information)
    titles = [lens.command.title for lens in await _lenses(client, uri)]
    assert any(t.startswith("sanitize: sanitizer-errors · 8193 errors (racecheck 8193) at line 8") for t in titles)
    fixed = text.replace("  float v = tile", "  __syncthreads();\n  float v = tile")
    kernel.write_text(fixed)
    replace_text(client, uri, fixed, 2)
    save(client, uri)
    await until(lambda: not race(), 120, "the stale finding withdrawn")
