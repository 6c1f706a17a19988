"""Escape tests: host code of a built library (a static initializer, as a candidate's launcher file would
carry) runs in the jailed worker exactly as a candidate's does, and tries to get out."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from cutegen.harness.worker import Worker
from cutegen.sandbox.jail import Jail, Limits, availability, find_bwrap

PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs():
    return [torch.randn(16)]

def get_init_inputs():
    return []
"""


@pytest.fixture(scope="session")
def jail() -> Jail:
    if find_bwrap() is None:
        pytest.skip("bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`")
    found = availability()
    assert found.ok, f"bwrap is installed but makes no sandbox here: {found.reason}"
    return Jail(found.bwrap)


@pytest.fixture
def escape(jail, tmp_path):
    """escape(c_body, limits=..., timeout=...) → (reply, what the host code printed). `c_body` is the body of
    a static initializer in a shared library the jailed worker loads (as it loads a candidate's .so)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build the escaping library")
    built = tmp_path / "built"
    built.mkdir()
    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)

    def run(body: str, *, limits: Limits = Limits(), timeout: float = 30, capfd=None) -> dict:
        source = built / "escape.c"
        source.write_text(_PRELUDE + "__attribute__((constructor)) static void escape(void) {\n"
                          + textwrap.indent(textwrap.dedent(body), "    ") + "\n    fflush(stderr);\n}\n")
        lib = built / "libescape.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O0", "-o", str(lib), str(source)], check=True)
        worker = Worker(jail=Jail(jail.bwrap, limits=limits).with_paths(readonly=[built, problem]))
        try:
            return worker.call({"problem": str(problem), "library": str(lib)}, timeout=timeout)
        finally:
            worker.stop()  # the jail and everything started in it end here

    return run


_PRELUDE = """
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
"""
