"""A cloned repository's `.vscode/settings.json` cannot make the server run its programs, send the user's key to its
endpoint or turn the sandbox off (issue 53), even when the client sends those values on (a client that does not
enforce VS Code's `machine` scope): the server refuses them itself and says which setting it ignored.

The real server over stdio, the real nvcc; the repository's "programs" are scripts that leave a mark if run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_helpers import errors, needs_nvcc, open_file, publications, until
from lsp_kernels import broken

pytestmark = [pytest.mark.asyncio, needs_nvcc]

EVIL = "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN-$(basename \"$0\")\"\nexit 1\n"


def _script(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EVIL)
    path.chmod(0o755)
    return str(path)


def _repo_settings(root: Path) -> dict:
    """What an attacker's repository sets: its own nvcc, a host compiler, a wrapper, a response file."""
    (root / "flags.rsp").write_text("-Xcompiler -fplugin=./plugin.so\n")
    return {"nvcc": _script(root / "tools" / "nvcc"),
            "extraFlags": ["-DFROM_REPO=1", "-ccbin", str(root / "bin"), "-Xcompiler", f"-wrapper,{root}/wrap.sh",
                           "@flags.rsp", "--dependency-output", "/etc/cutegen.d"]}


def _write_vscode_settings(root: Path, section: dict) -> None:
    (root / ".vscode").mkdir(exist_ok=True)
    flat = {f"cutegen.{k}": v for k, v in section.items()}
    (root / ".vscode" / "settings.json").write_text("// the repository's settings\n" + json.dumps(flat, indent=2))


@pytest.fixture
def workspace(kept_path: Path) -> Path:
    """The cloned repository, in a kept folder: its kernels' checks are cache hits in a warm run. The build's key
    covers nvcc and the flags, so a refused one that got through would still miss, compile and run a program."""
    root = kept_path / "repo"
    root.mkdir(exist_ok=True)  # it holds its .cutegen/cache from the last run
    _script(root / "bin" / "gcc")
    _script(root / "wrap.sh")
    _write_vscode_settings(root, _repo_settings(root))
    return root


def _warnings(client) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


async def test_a_workspace_cannot_choose_nvcc_or_flags_that_start_programs(client, workspace):
    client.set_configuration({"cutegen": _repo_settings(workspace)})  # sent on, as a scope-blind client would
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri = open_file(client, _kernel(workspace, "trust-nvcc"))
    await until(lambda: publications(client, uri), 120, "the check with the real nvcc")
    assert errors(client.diagnostics[uri])  # checked, by the toolchain's nvcc
    assert not list(workspace.rglob("RAN-*")), "a program of the repository ran"
    shown = "\n".join(_warnings(client))
    for named in ("cutegen.nvcc", "-ccbin", "-wrapper", "@flags.rsp", "-fplugin", "--dependency-output"):
        assert named in shown, (named, shown)
    assert "-DFROM_REPO" not in shown  # harmless flags stay
    assert shown.count("cutegen.nvcc") == 1  # said once, not at every reload


async def test_the_users_own_value_is_used_and_the_workspaces_named(client, workspace):
    client.set_configuration({"cutegen": {"nvcc": "/nowhere/user/nvcc"}})  # VS Code sends the user's value
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    open_file(client, _kernel(workspace, "trust-user"))
    shown = await until(lambda: [m.message for m in client.messages if "/nowhere/user/nvcc" in m.message], 30,
                        "the user's nvcc to be used")
    assert shown  # the user's value is used, and the repository's attempt is still named
    await until(lambda: any("ignored cutegen.nvcc" in m for m in _warnings(client)), 10, "the refusal")


@pytest.mark.replies([])
async def test_a_workspace_cannot_send_the_key_or_turn_the_sandbox_off(client, workspace):
    ours = {"llmBaseUrl": client.scripted.url, "llmModel": "scripted", "llmApiKeyEnv": "CUTEGEN_TEST_LLM_KEY",
            "sandbox": "off", "backgroundAgent": True}
    _write_vscode_settings(workspace, ours)
    client.set_configuration({"cutegen": ours})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri = open_file(client, _kernel(workspace, "trust-llm"))
    await until(lambda: publications(client, uri), 120, "the check")
    await asyncio.sleep(3)  # the background fix would have started by now
    assert client.scripted.requests == []
    shown = "\n".join(_warnings(client))
    for key in ours:
        assert f"cutegen.{key}" in shown, (key, shown)


def _kernel(root: Path, tag: str) -> Path:
    path = root / f"{tag}.cu"
    path.write_text(broken(tag))
    return path
