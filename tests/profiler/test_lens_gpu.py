"""On the GPU (H200): the per-line profile and the sanitizer end to end through the engine and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"
CASES = ROOT / "tests" / "kernels" / "sanitizer"


def test_lens_profile_lines_cli_prints_the_hot_lines(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-m", "cutegen", "profile", "--lines", str(SOFTSIGN), "--state-dir",
                        str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    print(p.stdout[-4000:])
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "hot lines of elementwise_kernel" in p.stdout and "softsign.cu:59" in p.stdout and "drain" in p.stdout
    assert "of samples on user lines" in p.stdout
    record = json.loads(next(tmp_path.rglob("latest-profile.json")).read_text())  # what --json prints
    assert record["lines"]["attribution"] == "inlined-at"
    assert record["lines"]["user_samples"] >= 0.9 * record["lines"]["total_samples"]


def test_lens_sanitize_runs_four_tools_and_places_an_out_of_bounds_store_at_its_line(builder, tmp_path):
    """As `cutegen sanitize` runs by default: all four tools on one call each. Only memcheck has something to say
    about a kernel whose one bug is a store past the end."""
    from cutegen.profiler.sanitizer import sanitize_kernel

    case = CASES / "oob_store.cu"
    bug = next(i for i, l in enumerate(case.read_text().splitlines(), 1) if "// BUG:" in l)
    record = sanitize_kernel(case, builder, state_dir=tmp_path)
    print(json.dumps(record.to_json().get("sanitizer"), indent=1, default=str)[:3000])
    assert record.verdict == "sanitizer-errors", record.message
    assert set(record.sanitizer.tools) == {"memcheck", "racecheck", "initcheck", "synccheck"}
    (f,) = record.sanitizer.findings
    assert (f.tool, f.file, f.line) == ("memcheck", str(case), bug) and "write" in f.message
    assert f.count >= 1 and f.threads and f.addresses
    assert record.diagnostics[0].line == bug
