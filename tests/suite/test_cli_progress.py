"""The command line's refusals, and the progress consumers: the rich display and the callback the language server
turns into work-done progress. (Runs without kernels: no compile, seconds.)"""

from __future__ import annotations

import io

from rich.console import Console

from cutegen.cli import main
from cutegen.cli.suite_progress import RichProgress
from cutegen.suite.progress import lsp_progress
from cutegen.suite.runner import run_suite
from tests.support.suite_cases import LEVEL1


def test_missing_paths_and_empty_folders_are_refused(tmp_path, capsys):
    def run(folder):
        return main(["suite", "run", str(folder), "--kernels", str(tmp_path), "--out", str(tmp_path / "o")])

    assert run(tmp_path / "nope") == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert run(tmp_path / "empty") == 2
    assert "no KernelBench problems" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_lsp_progress_gets_messages_and_percentages(make_config, tmp_path):
    reports = []
    run_suite([LEVEL1 / "31_ELU.py"], make_config(kernels=tmp_path, gpus=[]), on_event=lsp_progress(
        lambda message, pct: reports.append((message, pct))))
    assert reports[0] == ("0/1 problems · 0 running · 0 failed", 0)
    assert ("1/1 problems · 0 running · 0 failed · 31_ELU: no-kernel", 100) in reports
    assert reports[-1][1] == 100


def test_rich_display_shows_problems_and_gpus(make_config, tmp_path):
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    with RichProgress(console) as progress:
        run_suite([LEVEL1 / "31_ELU.py"], make_config(kernels=tmp_path, gpus=["0", "1"]), on_event=progress)
    text = buf.getvalue()
    assert "31_ELU: no-kernel" in text and "1/1" in text and "idle" in text
