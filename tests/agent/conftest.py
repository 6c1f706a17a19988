"""Fixtures for the agent tests: the scripted OpenAI-compatible server (real HTTP) and LSP clients."""

from __future__ import annotations

from urllib.parse import unquote, urlparse

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "server") not in sys.path:
    sys.path.insert(0, str(ROOT / "server"))

from tests.support.scripted_openai import ScriptedOpenAI  # noqa: E402

KEY_ENV = "CUTEGEN_TEST_LLM_KEY"
KEY = "sk-test-NEVER-WRITE-ME-4242"


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
def provider_workspace(build_state) -> Path:
    """The kernels of tests/agent/provider_cases.py in one folder that outlives the session, beside the shared
    test build cache (tests/conftest.py): the CLI and the editor tests of every provider mode verify the same
    candidates at the same paths, so each compiles once, and not again in the next run. What a run leaves
    besides the build cache (transcripts, records, learned endpoints) is cleared first."""
    import shutil

    from tests.agent import provider_cases

    folder = build_state / "provider-workspace"
    folder.mkdir(exist_ok=True)
    for left in ("agent", "runs", "llm-endpoints.json"):
        target = folder / ".cutegen" / left
        shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    return provider_cases.write(folder)


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


# -- the language server with an editor-like client (pytest-lsp) ----------------------------------

import asyncio  # noqa: E402
import os  # noqa: E402

try:
    import pytest_lsp
    from lsprotocol import types
    from tests.support.lsp_converter import code_action_converter
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
except ImportError:  # the LSP extras are optional; those tests then skip
    pytest_lsp = None

SERVER_ENV = {**os.environ, KEY_ENV: KEY,
              "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), *filter(None, [os.environ.get("PYTHONPATH")])])}


def pytest_configure(config):
    config.addinivalue_line("markers", "replies(list): scripted LLM replies for the agent client fixture")
    config.addinivalue_line("markers", "agent_settings(dict): extra `cutegen` settings for the agent client fixture")
    config.addinivalue_line("markers", "endpoint(**modes): the scripted endpoint's modes for the agent client fixture")


def _apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams):
    """What an editor does with workspace/applyEdit: refuse a stale version, else apply and send didChange."""
    changes = params.edit.document_changes or []
    for change in changes:
        if isinstance(change, types.CreateFile):  # a new file: created empty, then filled by the next edit
            path = Path(unquote(urlparse(change.uri).path))
            if path.exists():
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=f"{path.name} exists")
            path.write_text("")
            client.docs[change.uri] = (0, "")
            continue
        uri, version = change.text_document.uri, change.text_document.version
        have_version, text = client.docs[uri]
        if version is not None and version != have_version:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=f"version {version} is stale")
        from tests.agent.test_patch import _apply

        new = _apply(text, change.edits)
        client.docs[uri] = (have_version + 1, new)
        client.applied.append((uri, change.edits))
        if have_version == 0:  # the file just created: an editor writes it out
            Path(unquote(urlparse(uri).path)).write_text(new)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=have_version + 1),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)]))
    return types.ApplyWorkspaceEditResult(applied=bool(changes))


def make_agent_client():
    client = LanguageClient(converter_factory=code_action_converter)
    client.published, client.docs, client.applied = [], {}, []

    # pygls passes the client only to handlers whose first parameter is annotated with its type
    def publish(c: LanguageClient, params: types.PublishDiagnosticsParams):
        c.diagnostics[params.uri] = params.diagnostics
        c.published.append(params)

    def refresh(c: LanguageClient, params):
        return None

    features = {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                types.WORKSPACE_CODE_LENS_REFRESH: refresh, types.WORKSPACE_APPLY_EDIT: _apply_edit}
    register_lsp_features(client, features)
    return client


if pytest_lsp is not None:
    @pytest.fixture
    def workspace(tmp_path):
        root = tmp_path / "ws"
        root.mkdir()
        return root

    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                                  server_env=SERVER_ENV, client_factory=make_agent_client))
    async def agent_client(lsp_client: LanguageClient, request, workspace):
        """The real server over stdio, configured with a scripted endpoint holding the test's replies."""
        replies = request.node.get_closest_marker("replies")
        extra = request.node.get_closest_marker("agent_settings")
        mode = request.node.get_closest_marker("endpoint")  # ScriptedOpenAI's modes: reasoning_model, sse_only, ...
        server = None
        settings = dict(extra.args[0]) if extra else {}
        if replies is not None:
            server = ScriptedOpenAI(replies.args[0], expect_key=KEY, **(mode.kwargs if mode else {})).start()
            settings.update(llmBaseUrl=server.url, llmModel="scripted", llmApiKeyEnv=KEY_ENV, llmTimeout=30,
                            llmRetries=1)
        lsp_client.scripted = server
        lsp_client.set_configuration({"cutegen": settings})
        await lsp_client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
        yield
        try:
            await asyncio.wait_for(lsp_client.shutdown_session(), 20)
        except Exception:
            pass
        if server is not None:
            server.stop()
