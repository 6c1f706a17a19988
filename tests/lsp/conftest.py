"""pytest-lsp fixtures: the real server (`python -m cutegen lsp`) over stdio, in a temporary workspace."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp_helpers import SERVER_ENV


def pytest_configure(config):
    config.addinivalue_line("markers", "cutegen_settings(dict): the client's `cutegen` settings for this test")


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # every publication, with its version


def _code_lens_refresh(client: LanguageClient, params):
    client.code_lens_refreshes += 1


def _converter():
    """lsprotocol 2025.0.0 reads every CodeAction that has a `command` as a bare Command (its union
    hook only asks whether the key exists); real clients do not, so the test client must not either."""
    converter = default_converter()

    def command_or_action(obj, _):
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)
    return converter


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=_converter)
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
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
    ))
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:  # a test may have shut the server down itself
        pass
