"""pytest-lsp fixtures: the real server (`python -m cutegen lsp`) over stdio, in a temporary workspace."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from tests.support.lsp_converter import code_action_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp_helpers import SERVER_ENV


def pytest_configure(config):
    config.addinivalue_line("markers", "cutegen_settings(dict): the client's `cutegen` settings for this test")
    config.addinivalue_line("markers", "client_name(str): the clientInfo name the client gives at initialize")


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # every publication, with its version


def _code_lens_refresh(client: LanguageClient, params):
    client.code_lens_refreshes += 1


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=code_action_converter)
    client.published = []
    client.code_lens_refreshes = 0
    features = {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_publish,
                types.WORKSPACE_CODE_LENS_REFRESH: _code_lens_refresh}
    register_lsp_features(client, features)
    return client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                              server_env=SERVER_ENV, client_factory=make_client))
async def client(lsp_client: LanguageClient, request, workspace: Path):
    marker = request.node.get_closest_marker("cutegen_settings")
    lsp_client.set_configuration({"cutegen": marker.args[0] if marker else {}})
    name = request.node.get_closest_marker("client_name")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        client_info=types.ClientInfo(name=name.args[0]) if name else None,
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
    ))
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:  # a test may have shut the server down itself
        pass
