"""Fixtures for the agent tests: the scripted OpenAI-compatible server (real HTTP). The LSP client (`client`, with
its `replies` marker) and `workspace` are tests/conftest.py's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "server") not in sys.path:
    sys.path.insert(0, str(ROOT / "server"))

from tests.support.server_env import LLM_KEY as KEY, LLM_KEY_ENV as KEY_ENV  # noqa: E402  (the language server's env has it)
from tests.support.scripted_openai import ScriptedOpenAI  # noqa: E402


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


@pytest.fixture
def scripted(monkeypatch):
    """Start a scripted endpoint: `url = scripted(entries)`; the key is required and set in the env."""
    servers = []
    monkeypatch.setenv(KEY_ENV, KEY)

    def start(entries, **kw):
        server = ScriptedOpenAI(entries, expect_key=KEY, **kw).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


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


def llm_settings(url: str, **extra):
    from cutegen.settings import Settings

    base = dict(llm_base_url=url, llm_model="scripted", llm_api_key_env=KEY_ENV, llm_timeout=2.0, llm_retries=2,
                max_rounds=3)
    base.update(extra)
    return Settings(**base)


def no_key_anywhere(folder: Path) -> None:
    for f in Path(folder).rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f"the API key leaked into {f}"


@pytest.fixture
def agent_with(make_session, kept_path):
    """`agent_with(settings)`: the agent of a Session on `kept_path`, as the editor gets it; never on the GPU
    (the GPU path is tests/agent's GPU-marked tests)."""
    def agent(settings):
        return make_session(settings, state_dir=kept_path / ".cutegen").agent(kept_path / "k.cu", gpu=False)

    return agent
