"""Settings reach the server whichever way a client sends them: initializationOptions (Neovim's stock
client, Helix, Emacs), workspace/configuration on top, didChangeConfiguration on top of that. A
client that answers the pull with null, or never answers it, keeps its initializationOptions.

The observable effect needs no compile: an `nvcc` setting pointing nowhere is reported as an error
that names the path, and a bad `checkTimeout` as a warning that names the setting.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp_helpers import SERVER_ENV, open_file, until
from lsp_kernels import broken

pytestmark = pytest.mark.asyncio

NEVER = object()


async def _configuration(client: LanguageClient, params: types.ConfigurationParams):
    if client.config_reply is NEVER:  # advertises the request, answers only when the test ends
        await client.test_ended.wait()  # (pygls cannot shut down with the request still open)
        return [None for _ in params.items]
    return [client.config_reply for _ in params.items]


def _make_client() -> LanguageClient:
    client = LanguageClient()
    client.config_reply = None
    client.test_ended = asyncio.Event()
    features = {**DEFAULT_CLIENT_FEATURES, types.WORKSPACE_CONFIGURATION: _configuration}
    register_lsp_features(client, features)
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                              server_env=SERVER_ENV, client_factory=_make_client))
async def bare(lsp_client: LanguageClient):
    yield lsp_client  # not initialized: each test chooses its capabilities and initializationOptions
    lsp_client.test_ended.set()
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    except Exception:
        pass


async def _start(client, workspace: Path, *, init: object, configuration: bool = True, reply: object = None):
    caps = client_capabilities("visual-studio-code")
    if not configuration:
        caps.workspace.configuration = False
    client.config_reply = reply
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=workspace.as_uri(), initialization_options=init,
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))


def _shown(client, kind: types.MessageType) -> list[str]:
    return [m.message for m in client.messages if m.type == kind]


async def _toolchain_error(client, workspace: Path, tag: str) -> str:
    path = workspace / f"{tag}.cu"
    path.write_text(broken(tag))
    open_file(client, path)
    errors = await until(lambda: _shown(client, types.MessageType.Error), 15, "the toolchain error")
    return errors[-1]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


async def test_initialization_options_survive_a_client_that_never_answers(bare, workspace):
    await _start(bare, workspace, init={"cutegen": {"nvcc": "/nowhere/init/nvcc"}}, reply=NEVER)
    started = time.monotonic()
    error = await _toolchain_error(bare, workspace, "never-answers")
    assert "/nowhere/init/nvcc" in error
    assert time.monotonic() - started < 8  # the unanswered pull costs seconds, not the old 10 s wait


async def test_initialization_options_survive_a_null_answer(bare, workspace):
    # Neovim's stock client answers workspace/configuration from `settings`, with null when there are none.
    await _start(bare, workspace, init={"cutegen": {"nvcc": "/nowhere/init/nvcc"}}, reply=None)
    assert "/nowhere/init/nvcc" in await _toolchain_error(bare, workspace, "null-answer")


async def test_flat_initialization_options_are_the_section(bare, workspace):
    await _start(bare, workspace, init={"nvcc": "/nowhere/flat/nvcc"}, configuration=False)
    assert "/nowhere/flat/nvcc" in await _toolchain_error(bare, workspace, "flat")


async def test_pulled_settings_go_on_top_of_initialization_options(bare, workspace):
    await _start(bare, workspace, init={"cutegen": {"nvcc": "/nowhere/init/nvcc", "checkTimeout": -1}},
                 reply={"nvcc": "/nowhere/pulled/nvcc"})
    warning = await until(lambda: _shown(bare, types.MessageType.Warning), 10, "the settings warning")
    assert "cutegen.checkTimeout" in warning[0]  # the initializationOptions layer is still there
    assert "/nowhere/pulled/nvcc" in await _toolchain_error(bare, workspace, "pulled")


async def test_pushed_settings_go_on_top_without_the_configuration_request(bare, workspace):
    await _start(bare, workspace, init={"cutegen": {"nvcc": "/nowhere/init/nvcc"}}, configuration=False)
    assert "/nowhere/init/nvcc" in await _toolchain_error(bare, workspace, "pushed")
    bare.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"cutegen": {"nvcc": "/nowhere/pushed/nvcc"}}))
    await until(lambda: any("/nowhere/pushed/nvcc" in m for m in _shown(bare, types.MessageType.Error)), 15,
                "the pushed nvcc to be used")
