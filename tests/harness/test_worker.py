"""The worker isolates the caller: a hang or a crash is a verdict, and the next run works."""

from __future__ import annotations

import time

from cutegen.harness.worker import Worker


def test_hang_is_a_timeout_and_the_next_run_works(tmp_path):
    hang = tmp_path / "hang.py"
    hang.write_text("import time\ntime.sleep(3600)\n")
    worker = Worker()
    try:
        t = time.monotonic()
        # 6 s: the worker starts in about 2 s on a loaded 2-core machine and then hangs in the problem's import
        reply = worker.call({"problem": str(hang), "library": "/nonexistent.so"}, timeout=6)
        assert reply["verdict"] == "timeout" and "hangs" in reply["message"]
        assert time.monotonic() - t < 40
        reply = worker.call({"problem": str(tmp_path / "missing.py"), "library": "/x.so"}, timeout=60)
        assert reply["verdict"] == "problem-error" and "not found" in reply["message"]
    finally:
        worker.stop()


def test_host_crash_is_a_verdict_not_a_dead_caller(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("import os\nos._exit(3)\n")
    worker = Worker()
    try:
        reply = worker.call({"problem": str(crash), "library": "/x.so"}, timeout=60)
        assert reply["verdict"] == "crashed" and "exit code 3" in reply["message"]
        reply = worker.call({"problem": str(tmp_path / "missing.py"), "library": "/x.so"}, timeout=60)
        assert reply["verdict"] == "problem-error"
    finally:
        worker.stop()
