"""Profile Program and Sanitize Program in a real language server (pytest-lsp over stdio): the user's own command
(`cutegen.programCommand`, a user-only setting) refused with a clear message where it cannot run, and a program's
line profile, filed by the engine as a real run files it, marked in the program's sources as an ABI kernel's
profile is. The profile is the H200's capture of the softsign example (tests/profiler/fixtures), folded by the
engine through the line table of the same source built here (test_profile_lens.py's fixture)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_helpers import execute, open_file
from test_profile_lens import SOFTSIGN, _hints, _hover, softsign_lines  # noqa: F401 (a fixture)

from cutegen import records
from cutegen.lsp.command_ids import Command
from cutegen.lsp.program import NO_COMMAND
from cutegen.profiler.lines import Folder, fold
from cutegen.profiler.program import ProgramRun, file_lines
from cutegen.settings import Settings, editor_key
from cutegen.state import StateDir
from cutegen.workspace_trust import PROTECTED, screen

ROOT = Path(__file__).resolve().parents[2]


async def _run(client, command: Command, uri: str) -> dict:
    """A program command on the folder (or file) `uri`, as the palette sends it."""
    return await execute(client, command.value, {"uri": uri})


# -- the setting ----------------------------------------------------------------------------------------


def test_the_program_is_a_setting_only_the_user_chooses(tmp_path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text('{"cutegen.programCommand": ["./steal_keys.sh"]}')
    kept, refusals = screen({"programCommand": ["./steal_keys.sh"], "programKernel": "gemm"}, [tmp_path])
    assert kept == {"programKernel": "gemm"}  # a scope-blind client sent the workspace's value: dropped
    assert [r.setting for r in refusals] == ["cutegen.programCommand"]
    settings, problems = Settings.from_dict({"programCommand": ["./bench", "--size", "4096"], "programLaunches": 2})
    assert settings.program_command == ["./bench", "--size", "4096"] and settings.program_launches == 2 and not problems
    assert Settings.from_dict({"programCommand": "./bench --size 4096"})[1] == [
        "cutegen.programCommand must be a list of strings, not './bench --size 4096'"]


def test_every_protected_setting_is_machine_scoped_in_vs_code():
    """VS Code keeps a workspace from setting `machine`-scoped settings: each protected one is."""
    declared = json.loads((ROOT / "vscode-client" / "package.json").read_text())["contributes"]["configuration"]
    properties = {k: v for block in (declared if isinstance(declared, list) else [declared])
                  for k, v in block["properties"].items()}
    assert {editor_key(name): properties[editor_key(name)].get("scope") for name in PROTECTED} == {
        editor_key(name): "machine" for name in PROTECTED}


# -- refused where it cannot run --------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_without_a_command_it_names_the_setting(client, workspace):
    answer = await _run(client, Command.PROFILE_PROGRAM, workspace.as_uri())
    assert answer["ok"] is False and answer["message"] == f"CuTeGen: no program to profile: {NO_COMMAND}"
    assert "cutegen.programCommand" in answer["message"]


@pytest.mark.asyncio
@pytest.mark.cutegen_settings({"programCommand": ["./bench", "--size", "4096"], "programKernel": "hot_loop"})
async def test_without_nsight_compute_or_the_sanitizer_it_says_so(client, workspace):
    if shutil.which("ncu") or shutil.which("compute-sanitizer"):
        pytest.skip("this machine has Nsight Compute or compute-sanitizer")
    profiled = await _run(client, Command.PROFILE_PROGRAM, (workspace / "bench.cu").as_uri())
    assert profiled["ok"] is False
    assert profiled["message"].startswith("./bench --size 4096: Nsight Compute (ncu) was not found")
    assert "cutegen.ncu" in profiled["message"]
    sanitized = await _run(client, Command.SANITIZE_PROGRAM, workspace.as_uri())
    assert sanitized["ok"] is False and "compute-sanitizer was not found" in sanitized["message"]


@pytest.mark.asyncio
async def test_a_bad_argument_is_refused_before_anything_runs(client):
    with pytest.raises(Exception, match=r"profileProgram: arguments\[0\]\.uri: must be a file: URI"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=Command.PROFILE_PROGRAM.value, arguments=[{"uri": "https://example.com/bench"}]))


# -- the hot lines land in the program's sources ------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_programs_profile_marks_its_source_lines(client, workspace, softsign_lines):  # noqa: F811
    source = workspace / "softsign.cu"
    source.write_text(SOFTSIGN.read_text())
    lines = fold(softsign_lines["data"], softsign_lines["tables"],
                 Folder({softsign_lines["copy"]: str(source)}, softsign_lines["system"]))
    run = ProgramRun(["./softsign_bench", "--size", "4096"], lines=lines, report=str(workspace / "program.ncu-rep"))
    record = file_lines(StateDir(workspace / ".cutegen"), run)  # as Session.profile_program files a real run
    assert records.read(record).lines is not None

    text = source.read_text()
    uri = open_file(client, source, text)
    hints = await _hints(client, uri, len(text.splitlines()))
    assert hints[33] == "69 % · long_scoreboard" and hints[59] == "21 % · drain"  # as for the ABI kernel's profile
    assert "line 59: 21.3 % of the samples" in await _hover(client, uri, 59)
    # a file the program never ran has no marks
    other = workspace / "unrelated.cu"
    other.write_text(text)
    assert await _hints(client, open_file(client, other, text), len(text.splitlines())) == {}


def test_the_reply_names_the_hottest_user_line(softsign_lines, tmp_path):  # noqa: F811
    from types import SimpleNamespace

    from cutegen.lsp.program import lines_reply
    from cutegen.records import LineProfile

    source = tmp_path / "softsign.cu"
    profile = LineProfile.from_json(fold(softsign_lines["data"], softsign_lines["tables"],
                                         Folder({softsign_lines["copy"]: str(source)}, softsign_lines["system"])))
    ls = SimpleNamespace(refresh_code_lens=lambda: None, supports=lambda what: False)
    answer = lines_reply(ls, "./bench", profile, record="r.json")
    assert answer["ok"] and re.match(r"\./bench: hottest softsign\.cu:33 \(69 % · long_scoreboard\) · \d+ % on user "
                                     r"lines", answer["message"]), answer["message"]
    assert answer["lines"][0]["line"] == 33 and answer["record"] == "r.json"
