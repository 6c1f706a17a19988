"""torch only inside the GPU worker: a test asked of the server's session (the editor's, the CLI's) builds and
records without importing torch in the server's process. It used to import torch on every test, to write the
record's environment (torch's version, the card's name): seconds of import, and a CUDA context in the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server"

# A kernel with no paired problem: the session's test runs the server's side (the record and its environment) and
# answers at once, without a build or a worker.
PROBE = """
import json, sys
from pathlib import Path
from cutegen.session import Session

kernel = Path(sys.argv[1])
record = Session(state_dir=kernel.parent / ".cutegen").test(kernel)
print(json.dumps({"verdict": record.verdict, "environment": record.details["environment"],
                  "torch": "torch" in sys.modules}))
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_a_test_in_the_session_imports_no_torch(tmp_path):
    kernel = tmp_path / "alone.cu"
    kernel.write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    run = subprocess.run([sys.executable, "-c", PROBE, str(kernel)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(SERVER)})
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["verdict"] == "no-problem"
    assert seen["environment"]["nvcc"]  # the record still says where it ran
    assert seen["torch"] is False
