"""`cutegen check` as a user runs it: exit codes, the file:line:col format, JSON, clear failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "corpus" / "errors" / "dynamic_owning_tensor.cu"


def cutegen(*args: str, cwd: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "cutegen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_check_prints_located_errors_and_fails(tmp_path):
    p = cutegen("check", str(BROKEN), cwd=tmp_path)
    assert p.returncode == 1
    lines = [l for l in p.stdout.splitlines() if ": error: " in l]
    assert len(lines) == 1
    assert lines[0].startswith(f"{BROKEN}:12:")
    assert "Dynamic owning tensors not supported" in lines[0]
    assert "Traceback" not in p.stderr


def test_check_json_is_machine_readable(tmp_path):
    p = cutegen("check", "--json", str(BROKEN), cwd=tmp_path)
    result = json.loads(p.stdout)
    assert result["ok"] is False
    assert result["diagnostics"][0]["line"] == 12
    record = json.loads(Path(result["record"]).read_text())
    assert record["schema"] == 2 and "static assertion failed" in record["check"]["raw_log"]


def test_missing_file_and_missing_nvcc_are_plain_messages(tmp_path):
    p = cutegen("check", "nope.cu", cwd=tmp_path)
    assert p.returncode == 2 and "no such file" in p.stderr and "Traceback" not in p.stderr
    p = cutegen("check", "--nvcc", "/nonexistent/nvcc", str(BROKEN), cwd=tmp_path)
    assert p.returncode == 2 and "nvcc not found" in p.stderr and "Traceback" not in p.stderr
    assert "(setting --nvcc)" in p.stderr  # the CLI's own flag, not the editor's cutegen.nvcc


def test_a_directory_is_said_to_be_one(tmp_path):
    p = cutegen("check", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "is a directory" in p.stderr and "no such file" not in p.stderr


def test_state_dir_is_at_the_workspace_root_not_the_current_folder(tmp_path):
    """The editor keeps `.cutegen/` at the workspace root; the CLI, run from anywhere, uses the same one."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "kernels").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'k'\n")
    kernel = project / "kernels" / "k.cu"
    kernel.write_text(BROKEN.read_text())
    p = cutegen("check", "--json", str(kernel), cwd=elsewhere)
    assert Path(json.loads(p.stdout)["record"]).is_relative_to(project / ".cutegen" / "runs")
    assert not (elsewhere / ".cutegen").exists() and not (project / "kernels" / ".cutegen").exists()


def test_check_timeout_flag_stops_nvcc_and_names_itself(tmp_path):
    p = cutegen("check", "--timeout", "0.05", "--state-dir", str(tmp_path / ".cutegen"), str(BROKEN), cwd=tmp_path)
    assert p.returncode == 1 and "nvcc did not finish within 0.05 s (the check timeout: setting --timeout)" in p.stdout


def _options(command: str) -> dict[str, str]:
    """flag → its help text, from `cutegen COMMAND --help`."""
    import argparse

    from cutegen.cli import main

    found = {}

    def grab(parser, argv):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for action in sub.choices[command]._actions:
            found[(action.option_strings or [action.dest])[0]] = action.help or ""
        raise SystemExit(0)

    real = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = lambda self, argv=None, *a: grab(self, argv)
    try:
        main([command])
    except SystemExit:
        pass
    finally:
        argparse.ArgumentParser.parse_args = real
    return found


def test_every_argument_has_help_and_llm_flags_only_where_an_llm_is_used():
    for command in ("check", "test", "bench", "profile", "diagnose", "fix", "optimize", "tune", "restore-best",
                    "generate", "lsp"):
        options = _options(command)
        assert all(options.values()), f"{command}: arguments without help: {[k for k, v in options.items() if not v]}"
    assert not [o for o in _options("tune") if o.startswith("--llm")]
    assert "--llm-base-url" in _options("optimize") and "--ncu" in _options("profile")
    assert "--timeout" in _options("check") and "--problem" not in _options("generate")  # the problem, once


def test_help_shows_defaults(tmp_path):
    p = cutegen("bench", "--help", cwd=tmp_path)
    assert "(default: 5)" in p.stdout and "(default: 120.0)" in p.stdout


def test_optimize_says_an_unreachable_endpoint_before_building(tmp_path):
    import time

    started = time.perf_counter()
    p = cutegen("optimize", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--state-dir",
                str(tmp_path / ".cutegen"), str(ROOT / "examples" / "softsign" / "softsign.cu"), cwd=tmp_path)
    assert p.returncode == 2 and "cannot reach the LLM endpoint at http://127.0.0.1:9/v1" in p.stderr
    assert "--llm-base-url" in p.stderr and time.perf_counter() - started < 15
    assert not (tmp_path / ".cutegen" / "cache").exists()  # nothing was built


@pytest.mark.gpu  # without a GPU, profile says so first (test_cli_edges.py)
def test_profile_names_its_ncu_flag(tmp_path):
    p = cutegen("profile", "--ncu", str(tmp_path / "no-ncu"), "--state-dir", str(tmp_path / ".cutegen"),
                str(ROOT / "examples" / "softsign" / "softsign.cu"), cwd=tmp_path)
    assert p.returncode == 1 and "ncu-missing" in p.stdout and "set --ncu" in p.stdout


def test_diagnose_prints_its_answer_once(tmp_path):
    p = cutegen("diagnose", "--state-dir", str(tmp_path / ".cutegen"), str(BROKEN), cwd=tmp_path,
                env_extra={"CUTEGEN_LLM_BASE_URL": "", "CUTEGEN_LLM_MODEL": ""})
    assert p.returncode == 0 and p.stdout.strip(), p.stderr
    first_line = p.stdout.strip().splitlines()[0]
    assert first_line not in p.stderr and "diagnosis from the knowledge base" in p.stderr


H200_RECORDS = ROOT / "tests" / "records" / "h200"


def _present(kind: str, fixture: str, capsys) -> tuple[str, str]:
    """What the CLI prints for a record captured on the H200 (as `cutegen bench/test/profile` would after the run)."""
    from rich.console import Console

    from cutegen.cli import present
    from cutegen import records

    record = records.read(H200_RECORDS / fixture)
    record.path = "latest.json"
    err = Console(stderr=True, width=80)
    (present.profile if kind == "profile" else present.verdict)(record, err)
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_cli_prints_the_summary_the_editor_shows(capsys):
    out, _ = _present("bench", "softsign-bench.json", capsys)
    assert out.splitlines()[0] == ("$WORK/examples/softsign/softsign.cu: pass · 3.17 ms · 3.32× eager · "
                                   "1.04× torch.compile · 95 % of HBM peak")
    assert "4070 GB/s = 95% of 4.30 TB/s (H200, measured)" in out and "eager: 10.5183 ms → 3.32×" in out
    out, err = _present("test", "tail_bug-test.json", capsys)
    assert out.splitlines()[0].endswith(": mismatch · tail (296 of 3,146,024 wrong)") and "mismatch" in err


def test_cli_profile_puts_the_kernel_name_on_its_own_line(capsys):
    out, _ = _present("profile", "softsign-profile.json", capsys)
    lines = out.splitlines()
    assert lines[0].endswith(": profiled · memory-bound at 97% of achievable DRAM bandwidth (4.15 of 4.30 TB/s)")
    assert "#1 void elementwise_kernel<1>(const float *, float *, long)" in out
    assert "long-scoreboard-stalls" in out
    assert "Speed of Light: high memory throughput: SM 25 %, memory 86 % of peak" in out
    assert "is the top stall: 26.9 cycles per issue of 43.6" in out  # the signal's evidence
