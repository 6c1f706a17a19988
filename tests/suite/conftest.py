"""Fixtures for the suite's tests. The GPU stage runs on the CPU: tests.suite.host_judge serves the GPU jobs with
the harness's real checks, calling real nvcc-built host-code kernel libraries (host_kernels/, slow_kernels/)
through the kernel ABI, in worker processes that the suite schedules exactly as it schedules GPUs.

The kernels stay at fixed paths and a module's tests share one state dir, a kept folder of the shared test build
cache (tests/conftest.py): each kernel is compiled once, and a warm run compiles none. The runs' out folders (where
the agent writes its kernels, which are then built) are kept folders too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "server", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from tests.support.suite_cases import HANDLER, HOST_KERNELS  # noqa: E402


@pytest.fixture(scope="module")
def shared_state(request, build_state, tmp_path_factory) -> Path:
    """The module's state dir (per module, not per session: with `--dist loadfile` the modules of tests/suite run on
    two workers, and a kept folder is one process's at a time). Only its build cache outlives the run."""
    from tests.support.build_cache import kept_folder

    with kept_folder(build_state, "suite-state-" + request.module.__name__.rsplit(".", 1)[-1]) as folder:
        yield (folder or tmp_path_factory.mktemp("suite-state")) / ".cutegen"


@pytest.fixture
def make_config(kept_path, shared_state):
    from cutegen.settings import Settings
    from cutegen.suite.runner import SuiteConfig

    def make(**kw):
        settings = kw.pop("settings", None) or Settings(test_timeout=kw.pop("timeout", 8.0))
        base = dict(out=kept_path / "out", kernels=HOST_KERNELS, settings=settings, gpus=["0", "1"], handler=HANDLER,
                    compile_workers=2, state_dir=shared_state)
        base.update(kw)
        return SuiteConfig(**base)

    return make
