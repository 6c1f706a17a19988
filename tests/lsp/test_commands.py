"""Server commands: check with work-done progress, cancellation from both sides, plain replies."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from lsp_helpers import errors, needs_nvcc, open_file, publications, until
from lsp_kernels import BROKEN_LINE, KERNEL_LINE, broken

pytestmark = pytest.mark.asyncio


def _execute(command: str, *arguments) -> types.ExecuteCommandParams:
    return types.ExecuteCommandParams(command=command, arguments=list(arguments))


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _session_members(sid: int) -> list[int]:
    """Processes of nvcc's session: the Builder starts nvcc in a session of its own (cicc, ptxas...)."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return members


def _reports(client) -> list:
    return [v for values in client.progress_reports.values() for v in values]


@needs_nvcc
async def test_check_and_test_commands(client, tmp_path):
    # A file outside the workspace folder: it is still checked, with state next to it.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    path = outside / "outside.cu"
    path.write_text(broken("outside"))

    result = await client.workspace_execute_command_async(_execute("cutegen.server.check", path.as_uri()))
    assert result["ok"] is False and result["errors"] == 1 and result["message"] == "1 error(s)"

    kinds = [type(v).__name__ for v in _reports(client)]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert "WorkDoneProgressReport" in kinds  # the compiler stages
    assert (outside / ".cutegen" / "runs").is_dir()
    published = publications(client, path.as_uri())
    assert published and errors(published[-1].diagnostics)[0].range.start.line == BROKEN_LINE
    await until(lambda: client.code_lens_refreshes, 5, "a CodeLens refresh")

    # Test it: without a paired problem the harness answers at once (no build); the verdict is
    # recorded next to the file and the kernel's hover shows it.
    reply = await client.workspace_execute_command_async(_execute("cutegen.server.test", path.as_uri()))
    assert reply["ok"] is False
    if not _importable("cutegen.harness.run"):
        assert "not available in this build" in reply["message"]
        return
    assert reply["verdict"] == "no-problem" and Path(reply["record"]).is_relative_to(outside / ".cutegen")
    open_file(client, path)  # the same text was just checked: a cache hit, no compile
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        position=types.Position(line=KERNEL_LINE, character=20)))
    assert "**test**: no-problem" in hover.contents.value and "**bench**: no run yet" in hover.contents.value


async def _start_cancellable_check(client, workspace: Path, name: str):
    path = workspace / name
    path.write_text(broken(name))
    started = len(_reports(client))
    request = asyncio.ensure_future(client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND, _execute("cutegen.server.check", path.as_uri()), msg_id=f"id-{name}"))
    nvcc = await until(lambda: _processes_mentioning(name), 30, "nvcc to start")
    await until(lambda: any(isinstance(v, types.WorkDoneProgressReport) for v in _reports(client)[started:]),
                10, "a progress report")
    return request, nvcc[0]


@needs_nvcc
async def test_progress_cancel_stops_nvcc(client, workspace):
    request, nvcc = await _start_cancellable_check(client, workspace, "cancel_progress.cu")
    token = next(t for t, values in client.progress_reports.items()
                 if any(isinstance(v, types.WorkDoneProgressBegin) and v.cancellable for v in values))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(request, 20)
    assert result["cancelled"] is True
    await until(lambda: not _session_members(nvcc), 10, "nvcc and its children to exit")


@needs_nvcc
async def test_cancel_request_stops_nvcc(client, workspace):
    request, nvcc = await _start_cancellable_check(client, workspace, "cancel_request.cu")
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="id-cancel_request.cu"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(request, 20)
    await until(lambda: not _session_members(nvcc), 10, "nvcc and its children to exit")
    # The server is still there.
    reply = await client.workspace_execute_command_async(_execute("cutegen.server.fix", "file:///x.cu"))
    assert "not configured" in reply["message"]


@pytest.mark.parametrize("command, says", [
    ("cutegen.server.diagnose", "no such file"), ("cutegen.server.fix", "agent is not configured"),
    ("cutegen.server.optimize", "no such file")])
async def test_agent_commands_reply_plainly(client, workspace, command, says):
    # No LLM endpoint and no such file: each agent command answers plainly (tests/agent covers them working).
    reply = await client.workspace_execute_command_async(_execute(command, (workspace / "k.cu").as_uri()))
    assert reply["ok"] is False and says in reply["message"]


async def test_apply_patch_without_an_id_is_invalid_params(client, workspace):
    with pytest.raises(JsonRpcInvalidParams, match=r"cutegen.server.applyPatch: arguments\[0\].id: missing"):
        await client.workspace_execute_command_async(_execute("cutegen.server.applyPatch", (workspace / "k.cu").as_uri()))


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


async def test_profile_command_replies_plainly(client, workspace):
    reply = await client.workspace_execute_command_async(
        _execute("cutegen.server.profile", (workspace / "k.cu").as_uri()))
    # k.cu has no reference problem: the profiler says so instead of running ncu.
    assert reply["ok"] is False and reply["verdict"] == "no-problem"
    assert "no problem paired with k.cu" in reply["message"]


async def test_command_without_argument(client):
    with pytest.raises(JsonRpcInvalidParams, match="cutegen.server.check: arguments: missing"):
        await client.workspace_execute_command_async(_execute("cutegen.server.check"))


@needs_nvcc
@pytest.mark.cutegen_settings({"autoTest": True})
async def test_auto_test_runs_the_harness_after_a_clean_save(client, workspace):
    """autoTest: a file that compiles cleanly is tested right away; its run record feeds hover and CodeLens.
    Without a GPU the harness still builds it and records, plainly, that it was not run."""
    from lsp_kernels import fixed

    from cutegen import records

    kernel = workspace / "sum.cu"
    kernel.write_text("// cutegen: problem=sum.py\n" + fixed("auto-test"))
    (workspace / "sum.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                      "        return x.sum(dim=1)\ndef get_inputs():\n    return [torch.rand(4, 64)]\n"
                                      "def get_init_inputs():\n    return []\n")
    open_file(client, kernel)
    record = await until(lambda: records.latest(workspace / ".cutegen", str(kernel), "test"), timeout=240,
                         what="the auto-test run record")
    # No GPU: built, recorded as not run. With a GPU: the harness runs it and says this file has no launcher.
    from cutegen.toolchain import local_gpu_arch

    assert record.verdict == ("not-run" if local_gpu_arch() is None else "problem-error"), record.message
    assert record.details["problem"] == str(workspace / "sum.py") and record.details["build"]["ok"]
