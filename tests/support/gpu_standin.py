"""The GPU side as a machine without one can have it, for the language-server tests of the background loop.

`python -m tests.support.gpu_standin lsp` is the real server with three stand-ins where the GPU is, each at
a boundary the server crosses anyway:
- `nvidia-smi` (gpu_standin_bin/ first on PATH) says an H200 is there (hardware.local reads it);
- the GPU worker (`Worker` below, in place of harness/worker.Worker) answers with the payloads the H200 gave
  (tests/records/h200: softsign's bench, tail_bug's mismatch), as the kernel's `// standin:` line asks;
- `ncu` (gpu_standin_bin/ncu, given as cutegen.ncu) writes a report and exports the H200's softsign capture
  (tests/profiler/recorded/softsign), after the seconds the kernel asks for.
Everything else is the product: nvcc builds, records, the loop's stages and scheduling, pygls.

A kernel steers them with one comment line, e.g. `// standin: verdict=pass median_ms=4.7 test_s=2 ncu_s=30
hold=go-1`: the verdict and median the worker reports, how long a test, a timing and ncu take, and the name
of a file beside the problem that a worker call waits for (the test creates it to let the call end).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(__file__).resolve().parent / "gpu_standin_bin"
H200 = ROOT / "tests" / "records" / "h200"
BENCH = json.loads(H200.joinpath("softsign-bench.json").read_text())
TAIL = json.loads(H200.joinpath("tail_bug-test.json").read_text())


def directives(source: str) -> dict[str, str]:
    m = re.search(r"//\s*standin:(.*)", source)
    return dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv) if m else {}


def of_library(library: str) -> dict[str, str]:
    """The directives of the source a library was built from (the build cache keeps the copy beside it)."""
    return directives(Path(library).with_suffix(".cu").read_text())


class Worker:
    """harness/worker.Worker's call and stop, answering as the kernel's directives say."""

    def __init__(self, jail=None) -> None:
        self.calls = 0
        self._stopped = threading.Event()

    def call(self, request: dict, timeout: float) -> dict:
        self.calls += 1
        say = of_library(request["library"])
        timing = request.get("timing", False)
        seconds = float(say.get("time_s" if timing else "test_s", 0.2))
        if not _wait(Path(request["problem"]).parent, say, seconds, timeout, self._stopped):
            return {"verdict": "crashed", "message": "the worker process died during the run (stopped)"}
        if say.get("verdict", "pass") == "mismatch":
            return {"verdict": "mismatch", "message": "output 0: " + TAIL["mismatch"]["message"],
                    "mismatch": TAIL["mismatch"]}
        reply = {"verdict": "pass", "trials": 5, "message": "correct on 5 trials with fresh random inputs"}
        if timing:
            scale = float(say.get("median_ms", BENCH["timing"]["median_ms"])) / BENCH["timing"]["median_ms"]
            reply["timing"] = {k: v * scale if k.endswith("_ms") else v for k, v in BENCH["timing"].items()}
            reply.update(eager=BENCH["eager"], torch_compile=BENCH["torch_compile"],
                         throughput={**BENCH["throughput"], "gb_per_s": BENCH["throughput"]["gb_per_s"] / scale,
                                     "bandwidth_share": BENCH["throughput"]["bandwidth_share"] / scale})
        return reply

    def stop(self) -> None:
        """As the real worker's kill: a call in progress ends at once (the real one then reads "crashed")."""
        self._stopped.set()


def _wait(folder: Path, say: dict, seconds: float, timeout: float, stopped: threading.Event) -> bool:
    """False when stopped meanwhile."""
    deadline = time.monotonic() + min(timeout, 120)
    if stopped.wait(seconds):
        return False
    hold = say.get("hold")
    while hold and not (folder / hold).exists() and time.monotonic() < deadline:
        if stopped.wait(0.05):
            return False
    return not stopped.is_set()


def main() -> int:
    import cutegen.harness.worker

    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    cutegen.harness.worker.Worker = Worker  # Session.worker and the agent import it by name at call time
    from cutegen.cli import main as cli

    return cli(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
