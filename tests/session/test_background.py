"""The background loop's engine without an editor: what a saved version needs (background.plan), what a run means
next to the last passing version (background.regression, on the H200's real records with their timings moved),
where a failed verdict is shown, and the cancellation that kills ncu (cancel.Cancel on real processes)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from cutegen import background, records
from cutegen.background import NO_GPU, Stage
from cutegen.cancel import Cancel, Cancelled
from cutegen.records import RunRecord
from cutegen.session import Session
from cutegen.settings import Settings
from cutegen.state import StateDir

H200 = Path(__file__).resolve().parents[1] / "records" / "h200"
BENCH = json.loads((H200 / "softsign-bench.json").read_text())
TAIL = json.loads((H200 / "tail_bug-test.json").read_text())


# -- cancellation ---------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_stopping_kills_the_process_and_its_children(tmp_path):
    """ncu starts the profiled program and helpers of its own: the kill reaches the whole session."""
    cancel, child = Cancel(), tmp_path / "child.pid"
    import threading

    def stop_when_started():
        while not child.exists() or not child.read_text().strip():
            time.sleep(0.02)
        cancel.stop_processes()

    threading.Thread(target=stop_when_started, daemon=True).start()
    with pytest.raises(Cancelled):
        cancel.run(["sh", "-c", f"sleep 60 & echo $! > {child}; wait"], timeout=30)
    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    with pytest.raises(Cancelled):  # and nothing new starts through it
        cancel.run(["true"], timeout=5)


def test_a_child_in_a_process_group_of_its_own_dies_too(tmp_path):
    """A tool may put its target in a group of its own (setpgid): it is still in the session, and still killed."""
    import sys
    import threading

    cancel, child = Cancel(), tmp_path / "child.pid"
    script = (f"import subprocess, pathlib; p = subprocess.Popen(['sleep', '60'], process_group=0); "
              f"pathlib.Path({str(child)!r}).write_text(str(p.pid)); p.wait()")
    threading.Thread(target=lambda: (_wait_for(child), cancel.stop_processes()), daemon=True).start()
    with pytest.raises(Cancelled):
        cancel.run([sys.executable, "-c", script], timeout=30)
    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _wait_for(path: Path) -> None:
    while not path.exists() or not path.read_text().strip():
        time.sleep(0.02)


def test_a_run_that_ends_by_itself_is_not_cancelled_and_a_timeout_kills():
    done = Cancel().run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        Cancel().run(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - started < 10


def test_cancel_runs_its_hooks_and_later_checks_raise():
    cancel, called = Cancel(), []
    cancel.on_cancel(lambda: called.append("worker stopped"))
    cancel.check()
    cancel.cancel()
    assert called == ["worker stopped"] and cancel.cancelled
    with pytest.raises(Cancelled):
        cancel.check()
    cancel.on_cancel(lambda: called.append("late"))  # registered after the cancel: runs at once
    assert called[-1] == "late"


# -- what a saved version needs ----------------------------------------------------------------------


def _session(tmp_path: Path, **settings) -> tuple[Session, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    session = Session(Settings(**settings), state_dir=tmp_path / ".cutegen")
    kernel = tmp_path / "k.cu"
    kernel.write_text("// cutegen: problem=k.py\n__global__ void k() {}\n")
    (tmp_path / "k.py").write_text("# a problem\n")
    return session, kernel


def _record(session, kernel: Path, kind: str, verdict: str, *, digest: str | None = "current", at: float = 0.0,
            payload: dict | None = None) -> None:
    body = copy.deepcopy(payload) if payload else {}
    body.update(verdict=verdict, message=body.get("message", verdict), time=at or time.time())
    body["source_digest"] = records.source_digest(kernel) if digest == "current" else digest
    records.write(session.state_dir(kernel), kind, str(kernel), body)


def test_a_new_text_on_a_gpu_needs_every_stage(tmp_path):
    session, kernel = _session(tmp_path)
    planned = background.plan(session, kernel, gpu=True)
    assert planned.stages == [Stage.TEST, Stage.TIME, Stage.PROFILE] and not planned.why_not
    assert planned.digest == records.text_digest(kernel.read_text())


def test_what_was_done_for_this_text_is_not_done_again(tmp_path):
    session, kernel = _session(tmp_path)
    _record(session, kernel, "test", "pass")
    assert background.plan(session, kernel, gpu=True).stages == [Stage.TIME, Stage.PROFILE]
    _record(session, kernel, "bench", "pass")
    assert background.plan(session, kernel, gpu=True).stages == [Stage.PROFILE]
    _record(session, kernel, "profile", "ncu-failed")  # failed for this text: not on every save again
    assert background.plan(session, kernel, gpu=True).stages == []
    kernel.write_text(kernel.read_text() + "// changed\n")
    assert background.plan(session, kernel, gpu=True).stages == [Stage.TEST, Stage.TIME, Stage.PROFILE]


def test_a_profile_of_the_reference_is_no_profile_of_the_kernel(tmp_path):
    session, kernel = _session(tmp_path)
    _record(session, kernel, "test", "pass")
    _record(session, kernel, "bench", "pass")
    _record(session, kernel, "profile", "profiled", payload={"reference": True})  # Profile's reference mode
    assert background.plan(session, kernel, gpu=True).stages == [Stage.PROFILE]


def test_a_text_that_failed_is_not_tested_again_but_one_not_judged_is(tmp_path):
    session, kernel = _session(tmp_path)
    _record(session, kernel, "test", "mismatch")
    assert background.plan(session, kernel, gpu=True).stages == []
    _record(session, kernel, "test", "not-run")  # built on a machine without a GPU: nothing was judged
    assert background.plan(session, kernel, gpu=True).stages == [Stage.TEST, Stage.TIME, Stage.PROFILE]
    _record(session, kernel, "test", "pass", digest=None)  # an older record, without a digest, proves nothing
    assert background.plan(session, kernel, gpu=True).stages[0] is Stage.TEST


def test_without_a_gpu_it_says_so_unless_auto_test_asks_for_the_build(tmp_path):
    session, kernel = _session(tmp_path)
    assert background.plan(session, kernel, gpu=False) == background.Plan(why_not=NO_GPU)
    session, kernel = _session(tmp_path, auto_test=True, test_on_save=False)
    assert background.plan(session, kernel, gpu=False).stages == [Stage.TEST]  # built, recorded as not run


def test_settings_and_pairing_turn_it_off_silently(tmp_path):
    session, kernel = _session(tmp_path, test_on_save=False)
    assert background.plan(session, kernel, gpu=True) == background.Plan()
    session, kernel = _session(tmp_path, profile_after_test=False)
    assert background.plan(session, kernel, gpu=True).stages == [Stage.TEST, Stage.TIME]
    session, kernel = _session(tmp_path)
    (tmp_path / "k.py").unlink()  # the directive names a problem that is not there
    assert background.plan(session, kernel, gpu=True) == background.Plan()


# -- regressions, on the H200's softsign bench with its timings moved -----------------------------------


def _bench(median_ms: float, *, eager_ms: float | None = None, spread: float = 1.0) -> dict:
    """The captured bench with the kernel's median at `median_ms` (its p10/p90 moved along, widened by
    `spread`) and eager's median at `eager_ms`."""
    b = copy.deepcopy(BENCH)
    t = b["timing"]
    scale = median_ms / t["median_ms"]
    t["p10_ms"] = median_ms - (t["median_ms"] - t["p10_ms"]) * scale * spread
    t["p90_ms"] = median_ms + (t["p90_ms"] - t["median_ms"]) * scale * spread
    t["median_ms"] = median_ms
    if eager_ms is not None:
        b["eager"] = {**b["eager"], "median_ms": eager_ms}
    return b


def _two_versions(tmp_path, before: dict, after: dict, kind_after: str = "bench", verdict_after: str = "pass"):
    session, kernel = _session(tmp_path)
    now = time.time()
    _record(session, kernel, "bench", "pass", digest="v1", at=now - 60, payload=before)
    _record(session, kernel, kind_after, verdict_after, digest="v2", at=now, payload=after)
    return background.regression(session.state_dir(kernel), str(kernel))


def test_slower_beyond_the_interval_is_a_regression(tmp_path):
    found = _two_versions(tmp_path, _bench(3.1), _bench(4.7))
    assert found.message == "slower than the last passing version: 3.1 → 4.7 ms" and found.level == "warning"
    assert found.baseline.timing.median_ms == 3.1


def test_slower_within_the_interval_or_the_floor_is_not(tmp_path):
    assert _two_versions(tmp_path / "a", _bench(3.1), _bench(3.15)) is None  # inside p10-p90
    assert _two_versions(tmp_path / "b", _bench(3.1, spread=0.01), _bench(3.13, spread=0.01)) is None  # < 2 %
    assert _two_versions(tmp_path / "c", _bench(3.1), _bench(2.0)) is None  # faster


def test_a_slower_card_is_not_a_slower_kernel(tmp_path):
    """Kernel and eager both 20 % slower in the second run (clocks, power): the ratio held, no regression."""
    eager = BENCH["eager"]["median_ms"]
    assert _two_versions(tmp_path, _bench(3.1, eager_ms=eager), _bench(3.72, eager_ms=eager * 1.2)) is None


def test_wrong_after_a_pass_is_a_regression(tmp_path):
    found = _two_versions(tmp_path, _bench(3.1), TAIL, kind_after="test", verdict_after="mismatch")
    assert found.message == "was pass, now mismatch · tail (296 of 3,146,024 wrong)" and found.level == "error"


def test_no_earlier_passing_version_no_regression(tmp_path):
    session, kernel = _session(tmp_path)
    _record(session, kernel, "test", "mismatch", digest="v1", payload=TAIL)
    assert background.regression(session.state_dir(kernel), str(kernel)) is None
    _record(session, kernel, "bench", "pass", digest="v2", payload=_bench(4.7))  # the only passing one is itself
    assert background.regression(session.state_dir(kernel), str(kernel)) is None


def test_not_run_is_no_regression(tmp_path):
    assert _two_versions(tmp_path, _bench(3.1), {}, kind_after="test", verdict_after="not-run") is None


# -- where a failed verdict is shown -----------------------------------------------------------------


LAUNCHER = """#include <cutegen/abi.h>
__global__ void k(float* y) {}
CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs,
                                   int num_outputs, cudaStream_t stream) {
  DLTensor& sum = outputs[0];
  DLTensor& count = outputs [ 1 ];
  return 0;
}
"""


def _failed(message: str, verdict: str = "mismatch", mismatch: dict | None = None) -> RunRecord:
    payload = {"verdict": verdict, "message": message, **({"mismatch": mismatch} if mismatch else {})}
    return RunRecord.from_payload("test", "/w/k.cu", payload)


def test_a_mismatch_is_shown_at_the_line_that_takes_that_output():
    d = background.failure_diagnostic(_failed("output 1: 3 of 8 wrong", mismatch=TAIL["mismatch"]), LAUNCHER)
    assert d.line == 6 and d.code == background.FAILURE_CODE and d.message.startswith("test: mismatch · tail")
    assert "mismatch-tail" in d.explanation  # the knowledge base's entry for the pattern
    assert background.failure_diagnostic(_failed("output 0: wrong"), LAUNCHER).line == 5


def test_without_an_output_line_it_is_shown_at_the_entry_point():
    assert background.failure_diagnostic(_failed("illegal address", "cuda-error"), LAUNCHER).line == 3
    modelnew = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    assert background.failure_diagnostic(_failed("output 0: wrong"), modelnew).line == 3


def test_a_pass_or_a_run_that_judged_nothing_is_no_diagnostic():
    assert background.failure_diagnostic(_failed("fine", "pass"), LAUNCHER) is None
    assert background.failure_diagnostic(_failed("no GPU", "not-run"), LAUNCHER) is None
