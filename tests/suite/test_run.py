"""The whole `--kernels` pipeline on the CPU: real nvcc builds, worker processes scheduled one per (logical) GPU,
the harness's checks on host-code kernel libraries. Every way a problem can end is a verdict, and the run goes on;
a rerun resumes; a worker killed under a job is replaced and the job retried once."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cutegen.suite.gpus import LocalBackend
from cutegen import records
from cutegen.suite.runner import run_suite
from cutegen.suite.store import load
from tests.support.suite_cases import EXPECTED, GATED_KERNELS, HANDLER, LEVEL1, ROOT, SLOW_KERNELS


def test_every_outcome_is_a_verdict_and_the_run_goes_on(make_config):
    events = []
    config = make_config()
    summary = run_suite([LEVEL1], config, on_event=events.append)
    verdicts = {r["name"]: r["verdict"] for r in summary.rows}
    assert verdicts == EXPECTED
    by = {r["name"]: r for r in summary.rows}
    assert by["22_Tanh"]["retried"] is True  # its worker died twice: once retried, then the verdict
    assert by["30_Softsign"]["correct"] is True and by["30_Softsign"]["speedup_eager"] > 0  # CPU-timed here
    assert by["32_HardTanh"]["compiled"] is False and "expected an expression" in by["32_HardTanh"]["message"]
    # each GPU job ran in a worker that saw only its own GPU
    for name in ("19_ReLU", "30_Softsign"):
        rec = records.read(by[name]["record"])
        assert rec.details["visible_devices"] == by[name]["gpu"] and by[name]["gpu"] in ("0", "1")
    kinds = [e.kind for e in events]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("problem-done") == 6
    assert {e.gpu for e in events if e.kind == "gpu-busy"} <= {"0", "1"}
    assert events[-1].done == 6 and events[-1].failed == 4 and events[-1].running == 0
    # a rerun skips everything already done
    again = run_suite([LEVEL1], config)
    assert (again.skipped, again.done) == (6, 0)
    assert len((config.out / "results.jsonl").read_text().splitlines()) == 6


def test_without_a_gpu_kernels_are_built_and_reported_not_run(make_config):
    summary = run_suite([LEVEL1 / "30_Softsign.py", LEVEL1 / "32_HardTanh.py"], make_config(gpus=[]))
    by = {r["name"]: r for r in summary.rows}
    assert by["30_Softsign"]["verdict"] == "not-run" and by["30_Softsign"]["correct"] is None
    assert "no NVIDIA GPU" in by["30_Softsign"]["message"]
    assert by["32_HardTanh"]["verdict"] == "build-failed"


def test_a_worker_killed_mid_job_is_replaced_and_the_job_retried(make_config):
    backend = LocalBackend(["0"], HANDLER)
    killed = []

    def on_event(e):
        if e.kind == "gpu-busy" and not killed:
            pid = backend.slots()[0].pid
            killed.append(pid)
            threading.Timer(0.6, os.kill, (pid, signal.SIGKILL)).start()  # mid-job: each call sleeps 0.3 s

    config = make_config(kernels=SLOW_KERNELS)
    summary = run_suite([LEVEL1 / "30_Softsign.py"], config, on_event=on_event, backend=backend)
    (row,) = summary.rows
    assert killed and row["verdict"] == "pass" and row["retried"] is True


def _waiting_at(gate) -> list[int]:
    """Processes still started with this gate in their environment (a worker the suite left behind)."""
    mark = f"CUTEGEN_TEST_GATE={gate}".encode()
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and mark in open(f"/proc/{entry}/environ", "rb").read().split(b"\0"):
                found.append(int(entry))
        except OSError:
            pass
    return found


def _stderr_within(proc: subprocess.Popen, timeout: float, gate: Path) -> str:
    """The suite's stderr once it exits and closes its pipes; if it has not within `timeout`, the failure says
    whether the suite itself was still running (with every thread's stack: the CLI dumps them on SIGUSR1) or a
    process it started held its pipes open. (That is how an inherited, ignored SIGINT was found.)"""
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        running = proc.poll() is None
        if running:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(2)
            proc.kill()
        left = _waiting_at(gate)
        for pid in left:  # the gated worker blocks until the gate opens: end it, or nothing closes the pipe
            os.kill(pid, signal.SIGKILL)
        try:
            err = proc.communicate(timeout=10)[1]
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        state = "was still running" if running else f"had exited ({proc.returncode}) but processes {left} held its pipes"
        raise AssertionError(f"{timeout} s after Ctrl-C the suite {state}:\n{err}") from None


def test_ctrl_c_leaves_whole_lines_and_the_rerun_finishes(tmp_path, shared_state):
    """Deterministic: 30_Softsign's job (the second) tells the test it started (a FIFO) and then blocks until the
    test opens its gate, so the interrupt always lands in the middle of a job (no timing, no retries)."""
    out, gate, started = tmp_path / "out", tmp_path / "gate", tmp_path / "started"
    os.mkfifo(started)
    listener = os.open(started, os.O_RDONLY | os.O_NONBLOCK)  # the kernel writes here only while someone listens
    cmd = [sys.executable, "-m", "cutegen", "suite", "run", str(LEVEL1 / "30_Softsign.py"),
           str(LEVEL1 / "22_Tanh.py"), "--kernels", str(GATED_KERNELS), "--out", str(out), "--gpus", "0",
           "--handler", HANDLER, "--no-progress", "--compile-workers", "2", "--timeout", "600",
           "--state-dir", str(shared_state), "--jobs", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT)]),
           "CUTEGEN_TEST_GATE": str(gate), "CUTEGEN_TEST_STARTED": str(started)}
    # SIGINT at its default, as for a program run from a terminal: an ignored SIGINT is inherited (a shell's
    # background job, this test's own process in some runs), and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        ready, _, _ = select.select([listener], [], [], 300)  # until 30_Softsign's job is running
        assert ready and os.read(listener, 1) == b"1", "30_Softsign's job never started"
    finally:
        os.close(listener)
    proc.send_signal(signal.SIGINT)
    err = _stderr_within(proc, 60, gate)
    assert proc.returncode == 130, err
    first = load(out)
    assert [r["name"] for r in first] == ["22_Tanh"] and "rerun the same command to resume" in err
    assert all(json.loads(line) for line in (out / "results.jsonl").read_text().splitlines())
    assert not _waiting_at(gate), "the interrupted job's worker outlived the suite"
    gate.touch()  # the rerun's job may finish
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    rows = load(out)
    assert sorted(r["name"] for r in rows) == ["22_Tanh", "30_Softsign"]
    assert {r["name"]: r["verdict"] for r in rows} == {"22_Tanh": "pass", "30_Softsign": "pass"}
    assert len((out / "results.jsonl").read_text().splitlines()) == 2  # the first one was not redone
    assert "1 done before" in rerun.stderr and (out / "report.html").is_file()
