"""Every request gets an answer, whatever its params: wrong shapes sent to every request kind the server
registers and to every command id it advertises. Bad input is -32602 (InvalidParams) naming the argument,
never -32603 or silence, and never a traceback in window/logMessage; the server keeps answering.

The params are sent raw (tests/support/raw_lsp.py): a typed client could not send them.
"""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
import pytest_asyncio
from lsprotocol import types

from lsp_helpers import SERVER_ENV
from tests.support.raw_lsp import NoAnswer, RawClient
from cutegen.lsp.command_ids import Command

pytestmark = pytest.mark.asyncio

INVALID_PARAMS = -32602
KERNEL = "__global__ void k(float* y) { y[0] = 1.f; }\n"

# Valid params of every request kind the server registers (the test fails for a kind missing here).
POSITION = {"line": 0, "character": 16}
# A published diagnostic's data as the client echoes it back (convert.to_data of a real one).
DIAGNOSTIC = {"file": "/ws/k.cu", "line": 1, "col": 1, "end_col": 2, "severity": "error", "message": "m", "code": "c"}
RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}


def valid_requests(uri: str) -> dict[str, dict]:
    doc = {"uri": uri}
    return {
        types.TEXT_DOCUMENT_HOVER: {"textDocument": doc, "position": POSITION},
        types.TEXT_DOCUMENT_CODE_ACTION: {"textDocument": doc, "range": RANGE, "context": {"diagnostics": []}},
        types.TEXT_DOCUMENT_CODE_LENS: {"textDocument": doc},
        types.TEXT_DOCUMENT_INLAY_HINT: {"textDocument": doc, "range": RANGE},
    }


OPTIONAL = {"version", "instantiation", "diagnostic", "line", "character", "show"}  # null or left out is fine


def valid_arguments(uri: str) -> dict[str, list]:
    """A well-formed argument list per command id; one not listed gets the common [{"uri"}] form."""
    return {
        Command.APPLY_PATCH.value: [{"id": "p1", "uri": uri, "version": 1}],
        Command.FIX.value: [{"uri": uri, "version": 1, "diagnostic": DIAGNOSTIC}],
        Command.DIAGNOSE.value: [{"uri": uri, "version": 1, "diagnostic": DIAGNOSTIC}],
        Command.LAYOUT_PICTURE.value: [{"uri": uri, "line": 0, "character": 3, "instantiation": "k"}],
        Command.PROFILE_LINES.value: [{"uri": uri, "show": True}],
        Command.SHOW_VERSION.value: [{"id": "v1", "uri": uri}],
        Command.RESTORE_VERSION.value: [{"id": "v1", "uri": uri, "version": 1}],
    }


def _wrong_values(value):
    """Values of another type (or out of range) than `value`."""
    if isinstance(value, bool):
        return ["yes", 5, None]
    if isinstance(value, int):
        return [-1, "a", 2 ** 40, None, [1]]
    if isinstance(value, str):
        return [5, None, {"x": 1}]
    if isinstance(value, dict):
        return [[], "x", None, 7]
    if isinstance(value, list):
        return [{}, "x", 7]
    return ["x"]


def wrong_shapes(tree):
    """(path, what, mutated copy) for every wrong value at every place in `tree`, and every key left out."""
    def places(node, path):
        yield path, node
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            yield from places(child, [*path, key])

    for path, node in places(tree, []):
        where = ".".join(map(str, path)) or "params"
        for bad in _wrong_values(node):
            yield path, f"{where} = {json.dumps(bad)}", _replaced(tree, path, bad)
        if isinstance(node, dict):
            for key in node:
                yield ([*path, key], f"{where} without {key!r}",
                       _replaced(tree, path, {k: v for k, v in node.items() if k != key}))


def _replaced(tree, path, value):
    if not path:
        return value
    out = copy.deepcopy(tree)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _named(path, root: str) -> str:
    """The argument an answer must name: the innermost key of the path (list indexes skipped)."""
    keys = [k for k in path if isinstance(k, str)]
    return keys[-1] if keys else root


def _check_answer(answer: dict, what: str, name: str, failures: list[str], strict: bool) -> None:
    error = answer.get("error")
    if error is None:
        if strict:
            failures.append(f"{what}: answered as if valid: {json.dumps(answer.get('result'))[:200]}")
        return  # a request shape the server could read (a position past the end...): answered
    if error["code"] != INVALID_PARAMS:
        failures.append(f"{what}: code {error['code']} ({error['message'][:200]})")
    elif name not in error["message"]:
        failures.append(f"{what}: the message does not name {name!r}: {error['message'][:200]}")
    elif "Traceback" in error["message"] or error.get("data"):
        failures.append(f"{what}: internals in the answer: {json.dumps(error)[:200]}")


async def _send_all(client: RawClient, cases: list[tuple[str, dict, str, str]], strict: bool = False) -> list[str]:
    """Send every case at once; the failures (no answer, wrong code, argument not named)."""
    answers = await asyncio.gather(*(client.request(method, params) for method, params, _, _ in cases),
                                   return_exceptions=True)
    failures: list[str] = []
    for (method, params, name, what), answer in zip(cases, answers):
        if isinstance(answer, NoAnswer):
            failures.append(f"{what}: no answer")
        elif isinstance(answer, BaseException):
            raise answer
        else:
            _check_answer(answer, what, name, failures, strict)
    return failures


@pytest_asyncio.fixture
async def raw(workspace):
    (workspace / "k.cu").write_text(KERNEL)
    async with RawClient(workspace, SERVER_ENV, timeout=30) as client:
        uri = (workspace / "k.cu").as_uri()
        client.notify(types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {
            "uri": uri, "languageId": "cuda-cpp", "version": 1, "text": KERNEL}})
        yield client, uri


def _registered_requests() -> list[str]:
    from cutegen.lsp.server import create_server

    features = create_server().protocol.fm.features
    lifecycle = {types.INITIALIZE, types.SHUTDOWN}
    return sorted(m for m in features if m not in lifecycle and types.METHOD_TO_TYPES[m][1] is not None)


async def test_every_request_kind_answers_wrong_shapes_with_invalid_params(raw):
    client, uri = raw
    valid = valid_requests(uri)
    kinds = _registered_requests()
    missing = [k for k in kinds if k not in valid]
    assert not missing, f"add valid params for {missing} to valid_requests(): every request kind is attacked"
    cases = [(kind, bad, _named(path, "params"), f"{kind} {what}")
             for kind in kinds for path, what, bad in wrong_shapes(valid[kind])]
    failures = await _send_all(client, cases)
    assert not failures, f"{len(failures)} of {len(cases)} wrong shapes:\n" + "\n".join(failures[:40])
    # Well-formed edge values are answered as results: positions past the end, an unknown document.
    for params in ({"textDocument": {"uri": uri}, "position": {"line": 9999, "character": 9999}},
                   {"textDocument": {"uri": "file:///nonexistent/x.cu"}, "position": POSITION},
                   {"textDocument": {"uri": "untitled:Untitled-1"}, "position": POSITION}):
        answer = await client.request(types.TEXT_DOCUMENT_HOVER, params)
        assert "result" in answer, answer
    assert not [m for m in client.logged() if "Traceback" in m], client.logged()


async def test_every_command_answers_wrong_arguments_with_invalid_params(raw):
    client, uri = raw
    advertised = client.capabilities["executeCommandProvider"]["commands"]
    assert set(c.value for c in Command) <= set(advertised)
    valid = valid_arguments(uri)
    cases = []
    for command in advertised:
        arguments = valid.get(command, [{"uri": uri}])
        shapes = [("arguments", "x"), ("arguments", {}), ("arguments", []), ("uri", [5]), ("uri", [None]),
                  ("uri", [[uri]]), ("uri", [{**arguments[0], "uri": ""}]),
                  ("uri", [{**arguments[0], "uri": "untitled:Untitled-1"}]), ("uri", [{**arguments[0], "uri": "file:"}])]
        shapes += [(_named(path, "arguments"), [bad]) for path, what, bad in wrong_shapes(arguments[0])
                   if path and not (path[-1] in OPTIONAL and what.endswith(("= null", f"without {path[-1]!r}")))
                   and (path[0] != "diagnostic" or len(path) == 1)]  # its own fields: the case below
        if "diagnostic" in arguments[0]:
            shapes += [("diagnostic", [{**arguments[0], "diagnostic": {"key": "x"}}]),
                       ("line", [{**arguments[0], "diagnostic": {**DIAGNOSTIC, "line": "a"}}])]
        cases += [(types.WORKSPACE_EXECUTE_COMMAND, {"command": command, "arguments": bad}, name,
                   f"{command} {json.dumps(bad)[:160]}") for name, bad in shapes]
    failures = await _send_all(client, cases, strict=True)
    assert not failures, f"{len(failures)} of {len(cases)} wrong argument lists:\n" + "\n".join(failures[:60])
    assert not [m for m in client.logged() if "Traceback" in m], client.logged()


async def test_bad_notifications_log_one_line_and_the_server_goes_on(raw):
    client, uri = raw
    for params in (None, [], {"textDocument": {"uri": 5, "version": "a"}},
                   {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": "x", "text": 5}]}):
        for method in (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE,
                       types.TEXT_DOCUMENT_DID_CLOSE):
            client.notify(method, params)
    answer = await client.request(types.TEXT_DOCUMENT_HOVER, {"textDocument": {"uri": uri}, "position": POSITION})
    assert "result" in answer, answer
    assert not [m for m in client.logged() if "Traceback" in m], client.logged()
    ignored = [m for m in client.logged() if "ignored" in m]
    assert ignored and all("\n" not in m for m in ignored), client.logged()
