"""Fixtures for the agent tests. The scripted OpenAI-compatible server (`scripted`, real HTTP), the LSP client
(`client`, with its `replies` marker) and `workspace` are tests/conftest.py's; the helpers tests of the LLM paths
share are tests/support/llm.py's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "server") not in sys.path:
    sys.path.insert(0, str(ROOT / "server"))


@pytest.fixture(autouse=True)
def _fresh_endpoint_lessons():
    """Each test starts as a new process would: nothing learned about any endpoint yet (agent/endpoint.py)."""
    try:
        from cutegen.agent.endpoint import forget_session
    except ImportError:
        yield
        return
    forget_session()
    yield
    forget_session()


@pytest.fixture(scope="session")
def provider_workspace(build_state, tmp_path_factory) -> Path:
    """The kernels of tests/agent/provider_cases.py in one folder that outlives the session (a kept folder of
    tests/conftest.py): the CLI and the editor tests of every provider mode verify the same candidates at the same
    paths, so each compiles once, and not again in the next run. What a run leaves besides the build cache
    (transcripts, records, learned endpoints, shadow copies) is cleared first."""
    from tests.agent import provider_cases
    from tests.support.build_cache import kept_folder

    with kept_folder(build_state, "provider-workspace") as folder:
        yield provider_cases.write(folder or tmp_path_factory.mktemp("provider-workspace"))


@pytest.fixture
def agent_with(make_session, kept_path):
    """`agent_with(settings)`: the agent of a Session on `kept_path`, as the editor gets it; never on the GPU
    (the GPU path is tests/agent's GPU-marked tests)."""
    def agent(settings):
        return make_session(settings, state_dir=kept_path / ".cutegen").agent(kept_path / "k.cu", gpu=False)

    return agent
