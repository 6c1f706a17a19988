"""Run records from real H200 runs (schema 1, tests/records/h200/) read into the typed model, and the one summary
line every presenter shows; records of another schema or damaged ones read as a note, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen import records
from cutegen.harness.verdicts import Verdict
from cutegen.records import RunRecord
from cutegen.state import StateDir, workspace_root

H200_RECORDS = Path(__file__).resolve().parents[1] / "records" / "h200"

SUMMARIES = {
    "softsign-bench.json": "pass · 3.17 ms · 3.32× eager · 1.04× torch.compile · 95 % of HBM peak",
    "gemm_bf16-bench.json": "pass · 0.301 ms · 0.58× eager · 0.58× torch.compile · 59 % of compute peak",
    "tail_bug-test.json": "mismatch · tail (296 of 3,146,024 wrong)",
    "zero_output-test.json": "constant-output",
    "softsign-profile.json": "profiled · memory-bound at 97% of achievable DRAM bandwidth (4.15 of 4.30 TB/s)",
    "softsign-check.json": "compiles",
}


def h200(name: str) -> RunRecord:
    return records.read(H200_RECORDS / name)


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_real_schema1_records_read_into_their_summary(name):
    record = h200(name)
    assert record.schema == 1 and not record.note
    assert record.summary() == SUMMARIES[name]


def test_bench_figures_are_typed():
    r = h200("softsign-bench.json")
    assert r.timing.median_ms == pytest.approx(3.1657, abs=1e-4) and r.timing.trials == 100
    assert r.speedup("eager") == pytest.approx(3.3225, abs=1e-4)
    assert r.speedup("torch_compile") == pytest.approx(1.0402, abs=1e-4)
    # Schema 1 divided by the H200's measured copy bandwidth without saying so; the typed record says it.
    assert (r.throughput.gpu, r.throughput.ceiling_source, r.throughput.bandwidth_ceiling) == ("H200", "measured", 4.30e12)
    assert r.level == "ok" and r.details["environment"]["gpu"] == "NVIDIA H200"


def test_failures_carry_verdict_and_level():
    tail = h200("tail_bug-test.json")
    assert tail.mismatch.pattern == "tail" and tail.mismatch.bad == 296 and tail.level == "error"
    assert h200("zero_output-test.json").level == "error"
    profile = h200("softsign-profile.json")
    assert profile.profile.signals == ["long-scoreboard-stalls"] and profile.level == "ok"


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_schema2_round_trip_keeps_every_figure(tmp_path, name):
    old = h200(name)
    path = records.write(StateDir(tmp_path / ".cutegen"), old.kind, old.file, old)
    new = records.read(path)
    assert json.loads(path.read_text())["schema"] == 2 and new.schema == 2
    assert new.summary() == old.summary() and new.to_json() == {**old.to_json(), "schema": 2}
    assert records.latest(tmp_path / ".cutegen", old.file, old.kind).summary() == old.summary()


def test_a_recorder_returns_the_typed_record_the_editor_shows(tmp_path):
    payload = json.loads((H200_RECORDS / "softsign-bench.json").read_text())
    verdict, message = payload.pop("verdict"), payload.pop("message")
    for key in ("schema", "kind", "file", "time", "seconds"):
        payload.pop(key)
    recorder = records.Recorder(tmp_path / ".cutegen", "bench", "/ws/softsign.cu", dict(payload))
    done = recorder.finish(Verdict(verdict), message)
    assert done.summary() == SUMMARIES["softsign-bench.json"] and done.level == "ok"
    assert done.verdict == "pass" and f"{done.verdict}" == "pass"  # the enum's value, as a user reads it
    assert done.speedup("eager") == pytest.approx(3.3225, abs=1e-4)  # what the agent reads
    assert records.read(Path(done.path)).summary() == done.summary() and done.save_error is None


def test_a_recorder_on_a_full_disk_keeps_the_verdict_and_says_why(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")  # the state folder cannot be made under a file
    done = records.Recorder(blocked / ".cutegen", "test", "/ws/k.cu", {}).finish(Verdict.NOT_RUN, "built, not run")
    assert done.verdict == "not-run" and done.level == "info" and done.path is None and done.save_error


def test_the_json_written_is_what_the_old_dict_producers_wrote(tmp_path):
    """A finished record's file holds exactly the payload's figures: schema 1's layout in, schema 2 out, unchanged
    by the typed return (tests/records/h200 are what readers are tested on)."""
    payload = json.loads((H200_RECORDS / "softsign-bench.json").read_text())
    verdict, message = payload.pop("verdict"), payload.pop("message")
    for key in ("schema", "kind", "file", "time", "seconds"):
        payload.pop(key)
    done = records.Recorder(tmp_path / ".cutegen", "bench", "/ws/softsign.cu", dict(payload)).finish(verdict, message)
    stored = json.loads(Path(done.path).read_text())
    expected = records.RunRecord.from_payload("bench", "/ws/softsign.cu", {**payload, "verdict": verdict,
                                                                            "message": message}).to_json()
    for moving in ("time", "seconds"):
        stored.pop(moving), expected.pop(moving)
    assert stored == expected and "save_error" not in stored and "path" not in stored


SOFTSIGN_EVIDENCE = "long-scoreboard (waiting on global/local memory) is the top stall: 26.9 cycles per issue of 43.6"
# The `profile` of a schema-2 record as cutegen <= 0.3 reads it: ProfileFigures(**profile) with these fields only.
PROFILE_FIELDS_READ_BY_0_3 = {"bound", "summary", "signals", "share_of_peak", "gpu", "report"}


def _profile_payload() -> tuple[dict, str, str]:
    """The H200 profile as profile_kernel hands it to its Recorder (the payload before verdict and message)."""
    payload = json.loads((H200_RECORDS / "softsign-profile.json").read_text())
    verdict, message = payload.pop("verdict"), payload.pop("message")
    for key in ("schema", "kind", "file", "time", "seconds"):
        payload.pop(key)
    return payload, verdict, message


def test_a_profile_record_keeps_the_classification_and_each_signals_evidence(tmp_path):
    old = h200("softsign-profile.json")  # schema 1: the producer's dict, as written then
    assert old.profile.classification["sol"] == "high memory throughput: SM 25 %, memory 86 % of peak"
    assert old.profile.classification["roofline_bound"] == "memory" and "signals" not in old.profile.classification
    assert old.profile.evidence == {"long-scoreboard-stalls": SOFTSIGN_EVIDENCE}
    assert old.profile.signal_evidence() == [{"name": "long-scoreboard-stalls", "evidence": SOFTSIGN_EVIDENCE}]
    payload, verdict, message = _profile_payload()
    done = records.Recorder(tmp_path / ".cutegen", "profile", "/ws/softsign.cu", payload).finish(verdict, message)
    again = records.read(Path(done.path))
    for record in (done, again):  # what profile_kernel returns, and what a later reader gets from the file
        assert record.profile.evidence == old.profile.evidence and record.profile.classification == old.profile.classification
        assert record.summary() == SUMMARIES["softsign-profile.json"]


def test_the_stored_profile_stays_readable_by_the_readers_of_cutegen_0_3(tmp_path):
    """The new figures ride in `details` (schema 1's keys there), so an older reader's ProfileFigures(**profile)
    does not meet a field it does not know and the record does not read as unreadable there."""
    payload, verdict, message = _profile_payload()
    done = records.Recorder(tmp_path / ".cutegen", "profile", "/ws/softsign.cu", payload).finish(verdict, message)
    stored = json.loads(Path(done.path).read_text())
    assert set(stored["profile"]) == PROFILE_FIELDS_READ_BY_0_3 and stored["schema"] == 2
    assert stored["details"]["signals"] == [{"name": "long-scoreboard-stalls", "evidence": SOFTSIGN_EVIDENCE}]
    assert stored["details"]["classification"]["sol"].startswith("high memory throughput")


def test_a_profile_record_of_cutegen_0_3_loads_without_the_figures_it_did_not_keep(tmp_path):
    stored = json.loads(Path(records.write(tmp_path / ".cutegen", "profile", "/ws/k.cu", h200("softsign-profile.json")))
                        .read_text())
    for key in ("classification", "signals"):  # what 0.3's profile records lack
        del stored["details"][key]
    path = tmp_path / "old-profile.json"
    path.write_text(json.dumps(stored))
    record = records.read(path)
    assert not record.note and record.profile.signals == ["long-scoreboard-stalls"]
    assert record.profile.evidence == {} and record.profile.classification == {}
    assert record.profile.signal_evidence() == [{"name": "long-scoreboard-stalls", "evidence": ""}]


def test_a_record_crosses_a_process_as_a_message():
    """The suite's GPU worker replies with the profile record as JSON (suite/gpus.py → rows.profile_record)."""
    old = h200("softsign-profile.json")
    back = RunRecord.from_message(json.loads(json.dumps(old.to_message())))
    assert back.path == old.path and back.save_error is None and back.to_json() == old.to_json()
    assert back.profile.evidence == old.profile.evidence


@pytest.mark.parametrize("content, says", [
    ({"schema": 99, "kind": "bench", "file": "/ws/k.cu", "verdict": "pass"}, "schema 99"),
    ({"kind": "test", "verdict": "pass"}, "schema None"),
    ({"schema": 1, "kind": "bench", "file": "/ws/k.cu", "verdict": "pass", "timing": {"median": 1}}, "unreadable"),
    ({"schema": 2, "kind": "bench", "file": "/ws/k.cu", "verdict": "pass", "timing": "fast"}, "unreadable"),
    ({"schema": 2, "kind": "profile", "file": "/ws/k.cu", "verdict": "profiled",  # evidence not as written
      "profile": {"bound": "memory", "summary": "s"}, "details": {"signals": ["spills"]}}, "unreadable"),
    ([1, 2], "damaged"),
    ("{not json", "damaged"),
])
def test_other_schemas_and_damaged_records_read_as_a_note(tmp_path, content, says):
    path = tmp_path / "latest-bench.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    record = records.read(path)
    assert says in record.summary() and "again" in record.summary() and record.level == "info"


def test_a_missing_record_is_none(tmp_path):
    assert records.read(tmp_path / "nothing.json") is None
    assert records.latest(tmp_path, "/ws/k.cu", "bench") is None


def test_workspace_root_is_the_nearest_marked_folder(tmp_path):
    project = tmp_path / "project"
    (project / "a" / "b").mkdir(parents=True)
    kernel = project / "a" / "b" / "k.cu"
    kernel.write_text("")
    assert workspace_root(kernel) == kernel.parent  # nothing marks a root: the file's own folder
    (project / ".git").mkdir()
    assert workspace_root(kernel) == project
    (project / "a" / "pyproject.toml").write_text("")
    assert workspace_root(kernel) == project / "a"
    assert StateDir.for_file(kernel).path == project / "a" / ".cutegen"
    assert StateDir.for_file(kernel, [project]).path == project / ".cutegen"  # the editor's folder wins


def test_state_dir_owns_the_layout(tmp_path):
    state = StateDir(tmp_path / ".cutegen")
    kernel = tmp_path / "k.cu"
    assert state.latest_record(kernel, "bench").parent == state.runs(kernel)
    assert state.runs(kernel).name.startswith("k-") and state.agent(kernel).name == state.runs(kernel).name
    assert state.build_cache == tmp_path / ".cutegen" / "cache" and Path(state) == state.path
    copy = tmp_path / "other" / "k.cu"  # the same name elsewhere: another folder
    assert state.runs(copy) != state.runs(kernel)


def test_fixture_paths_are_not_machine_paths():
    for f in H200_RECORDS.glob("*.json"):
        text = f.read_text()
        assert "/work/" not in text and "/tmp/" not in text, f.name
