"""The workspace-trust rule by itself: which workspace flags start programs, and reading VS Code's settings file."""

from __future__ import annotations

from pathlib import Path

from cutegen.workspace_trust import safe_flags, screen, workspace_values


def test_flags_that_start_programs_are_dropped_with_their_argument(tmp_path: Path):
    flags = ["-DX=1", "-ccbin", "/repo/bin", "--compiler-bindir=/repo/bin", "-Xcompiler", "-O2,-wrapper,/x.sh",
             "--compiler-options=-fplugin=/p.so", "-Xcompiler", "-Wall", "--run", "-std=c++17", "-Xlinker",
             "-plugin=/l.so", "-MF", "../../x.d", "-MF", "deps.d"]
    kept, bad = safe_flags(flags, tmp_path)
    assert kept == ["-DX=1", "-Xcompiler", "-Wall", "-std=c++17", "-MF", "deps.d"]
    assert [flag for flag, _ in bad] == ["-ccbin /repo/bin", "--compiler-bindir=/repo/bin",
                                         "-Xcompiler -O2,-wrapper,/x.sh",
                                         "--compiler-options=-fplugin=/p.so", "--run", "-Xlinker -plugin=/l.so",
                                         "-MF ../../x.d"]
    assert "passes -wrapper to the host compiler" in dict(bad)["-Xcompiler -O2,-wrapper,/x.sh"]


def test_response_files_are_read_before_they_are_used(tmp_path: Path):
    (tmp_path / "ok.rsp").write_text("-DA=1 # a comment\n-I include\n")
    (tmp_path / "bad.rsp").write_text("-DA=1\n@inner.rsp\n")
    (tmp_path / "inner.rsp").write_text("-Xcompiler '-B /repo'\n")
    (tmp_path / "loop.rsp").symlink_to(tmp_path / "loop.rsp")
    kept, bad = safe_flags(["@ok.rsp", "@bad.rsp", "--options-file", "missing.rsp", "-optf=loop.rsp"], tmp_path)
    assert kept == ["@ok.rsp"]
    why = dict(bad)
    assert "-Xcompiler -B /repo" in why["@bad.rsp"]
    assert "cannot read" in why["--options-file missing.rsp"] and "cannot read" in why["-optf=loop.rsp"]


def test_settings_json_with_comments_and_both_key_styles(tmp_path: Path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text(
        '{\n  // a comment\n  "cutegen.nvcc": "/r/nvcc", /* another */\n  "cutegen": {"sandbox": "off"},\n'
        '  "x": "http://a//b",\n}\n')
    assert workspace_values([tmp_path]) == {"nvcc": "/r/nvcc", "sandbox": "off"}
    kept, refusals = screen({"nvcc": "/r/nvcc", "sandbox": "required", "arch": "sm_90a"}, [tmp_path])
    assert kept == {"sandbox": "required", "arch": "sm_90a"}  # the user's sandbox value differs: it is theirs
    assert {r.setting for r in refusals} == {"cutegen.nvcc", "cutegen.sandbox"}  # both said: the repo tried


def test_a_broken_settings_file_sets_nothing(tmp_path: Path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text("[1, 2")
    assert workspace_values([tmp_path, tmp_path / "gone"]) == {}
