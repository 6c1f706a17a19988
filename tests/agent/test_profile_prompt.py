"""What the agent's prompts say about a typed run record (prompts.failure_text), for the records captured on the
H200: a profile's classification with each signal's evidence, a failed test's verdict and mismatch report."""

from __future__ import annotations

from pathlib import Path

from cutegen import records
from cutegen.agent import prompts

H200_RECORDS = Path(__file__).resolve().parents[1] / "records" / "h200"


def test_the_profile_prompt_gives_the_bound_and_each_signals_evidence(tmp_path):
    old = records.read(H200_RECORDS / "softsign-profile.json")
    stored = records.read(records.write(tmp_path / ".cutegen", "profile", old.file, old))  # as a later run reads it
    for record in (old, stored):
        text = prompts.failure_text("softsign.cu", "x\n", profile=record)
        assert text.splitlines()[0] == "Profile: memory-bound. memory-bound at 97% of achievable DRAM bandwidth (4.15 of 4.30 TB/s)"
        assert ("- signal long-scoreboard-stalls: long-scoreboard (waiting on global/local memory) is the top stall: "
                "26.9 cycles per issue of 43.6") in text
        assert "Hot lines" not in text  # this capture has no per-line profile


def test_a_failed_test_record_gives_its_verdict_and_mismatch_report():
    record = records.read(H200_RECORDS / "tail_bug-test.json")
    text = prompts.failure_text("tail_bug.cu", "x\n", record=record)
    first, report = text.splitlines()[:2]
    assert first.startswith("Test verdict `mismatch`: ")
    assert report.startswith("Mismatch report: pattern=tail, bad=296, total=3146024")
