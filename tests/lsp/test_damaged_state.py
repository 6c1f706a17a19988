"""State on disk that once broke a check for good (issue 53), through the real server over stdio: a build cache
`outcome.json` of the wrong shape, a header that is a symlink loop, a file URI that is itself a loop, a Latin-1
file (the same refusal as the CLI's), and notifications whose ids are of the wrong type. Each ends in a miss or
a one-line message, never a traceback or an internal error."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_helpers import SERVER_ENV, needs_nvcc
from tests.support.raw_lsp import RawClient

pytestmark = [pytest.mark.asyncio, needs_nvcc]

BROKEN = "__global__ void k(float* y) { y[0] = undeclared; }\n"
SHAPES = ["[]", "{}", '{"schema": 99}', '{"returncode": "0", "ptxas_ok": true, "log": "", "command": [], '
          '"seconds": 1, "artifact": null}']


def _open(client: RawClient, path: Path, text: str, version: int = 1) -> str:
    client.notify(types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {
        "uri": path.as_uri(), "languageId": "cuda-cpp", "version": version, "text": text}})
    return path.as_uri()


async def _published(client: RawClient, uri: str, after: int = 0, timeout: float = 120) -> list[dict]:
    """The diagnostics of the first publication for `uri` past the first `after` ones."""
    for _ in range(int(timeout / 0.1)):
        found = [n["params"] for n in client.notifications
                 if n.get("method") == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and n["params"]["uri"] == uri]
        if len(found) > after:
            return found[after]["diagnostics"]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no publication for {uri}; log: {client.logged()}")


def _no_traceback(client: RawClient) -> None:
    assert not [m for m in client.logged() if "Traceback" in m or "internal error" in m], client.logged()
    assert b"Traceback" not in client.stderr, client.stderr.decode()[-2000:]


async def test_a_cache_outcome_of_any_wrong_shape_is_a_miss(tmp_path: Path):
    kernel = tmp_path / "cached.cu"
    kernel.write_text(BROKEN)
    async with RawClient(tmp_path, SERVER_ENV, timeout=60) as client:
        uri = _open(client, kernel, BROKEN)
        assert any(d["severity"] == 1 for d in await _published(client, uri))
        for n, shape in enumerate(SHAPES, start=1):
            outcomes = list((tmp_path / ".cutegen").rglob("outcome.json"))
            assert outcomes
            for outcome in outcomes:
                outcome.write_text(shape)
            client.notify(types.TEXT_DOCUMENT_DID_SAVE, {"textDocument": {"uri": uri}})
            diagnostics = await _published(client, uri, after=n)
            assert any("undeclared" in d["message"] for d in diagnostics), (shape, diagnostics)
            assert json.loads(outcomes[0].read_text()).get("returncode") not in (None, "0")  # compiled again
    _no_traceback(client)


async def test_symlink_loops_end_in_a_diagnostic_or_an_empty_answer(tmp_path: Path):
    (tmp_path / "loop.h").symlink_to(tmp_path / "loop.h")
    (tmp_path / "self.cu").symlink_to(tmp_path / "self.cu")
    includes = tmp_path / "includes.cu"
    includes.write_text('#include "loop.h"\n' + BROKEN)
    async with RawClient(tmp_path, SERVER_ENV, timeout=60) as client:
        uri = _open(client, includes, includes.read_text())
        assert any("loop.h" in d["message"] for d in await _published(client, uri))
        loop = _open(client, tmp_path / "self.cu", BROKEN)
        position = {"line": 0, "character": 16}
        for method, params in ((types.TEXT_DOCUMENT_HOVER, {"textDocument": {"uri": loop}, "position": position}),
                               (types.TEXT_DOCUMENT_CODE_LENS, {"textDocument": {"uri": loop}})):
            answer = await client.request(method, params)
            assert "result" in answer, answer
        assert any("self.cu cannot be read" in d["message"] for d in await _published(client, loop))
    _no_traceback(client)


async def test_a_latin1_file_gets_the_clis_refusal_in_the_editor(tmp_path: Path):
    kernel = tmp_path / "latin1.cu"
    kernel.write_bytes("// café\n".encode("latin-1") + BROKEN.encode())
    cli = subprocess.run([sys.executable, "-m", "cutegen", "check", "--json", str(kernel)], env=SERVER_ENV,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    (said,) = [d["message"] for d in json.loads(cli.stdout)["diagnostics"]]
    assert "latin1.cu is not UTF-8 (byte 0xe9 on line 1)" in said and cli.returncode == 1
    async with RawClient(tmp_path, SERVER_ENV, timeout=60) as client:
        uri = _open(client, kernel, kernel.read_bytes().decode("latin-1"))
        assert [d["message"] for d in await _published(client, uri)] == [said]
    _no_traceback(client)


async def test_ids_of_the_wrong_type_are_one_line(tmp_path: Path):
    async with RawClient(tmp_path, SERVER_ENV, timeout=60) as client:
        for method, params in (("$/cancelRequest", {"id": {}}), ("$/cancelRequest", {"id": [1]}),
                               ("window/workDoneProgress/cancel", {"token": []})):
            client.notify(method, params)
        answer = await client.request(types.TEXT_DOCUMENT_HOVER, {
            "textDocument": {"uri": (tmp_path / "none.cu").as_uri()}, "position": {"line": 0, "character": 0}})
        assert "result" in answer
        ignored = [m for m in client.logged() if m.startswith("ignored ")]
        assert len(ignored) == 3 and all("must be an integer or a string" in m for m in ignored), client.logged()
    _no_traceback(client)
