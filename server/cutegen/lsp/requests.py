"""Every request gets an answer (the protocol's side; CuteGenProtocol calls these).

- Params that do not fit their type (`line: -1`, `line: "a"`, no `textDocument`) are answered -32602
  (InvalidParams) naming the field, instead of pygls' silence; a notification with such params is dropped with
  one log line.
- A command's arguments are decoded to their shape (arguments.py) before its handler runs.
- Any other exception in a handler is answered -32603 with a one-line message, and logged as one line; the
  traceback goes to the server's stderr (the editor's output channel shows it too), never into window/logMessage.
"""

from __future__ import annotations

import logging
import re

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from cutegen.lsp.arguments import _VALIDATOR, InvalidArguments, decode, first_leaf

log = logging.getLogger("cutegen.lsp")


class Refused:
    """A message whose params could not be read: handle_message answers it (request) or drops it (notification)."""

    jsonrpc = "2.0"

    def __init__(self, data: dict, why: str) -> None:
        self.id = data.get("id")
        self.method = str(data.get("method", ""))
        self.why = why

    @property
    def is_request(self) -> bool:
        return self.id is not None and bool(self.method)

    def error(self) -> types.ResponseError:
        return types.ResponseError(code=JsonRpcInvalidParams.CODE, message=f"{self.method}: {self.why}")


def refused(data: dict, error: BaseException) -> Refused:
    return Refused(data, describe(error.__cause__ or error, data.get("params")))


def describe(error: BaseException, params) -> str:
    """What is wrong with `params`, by field: 'params.position.line: should be in range [0:2147483647], but was -1'."""
    if not isinstance(params, dict):
        return f"params: must be an object, got {type(params).__name__ if params is not None else 'null'}"
    if not isinstance(error, cattrs.BaseValidationError):
        return f"params: {type(error).__name__}: {error}"
    path, leaf = first_leaf(error, "")
    if isinstance(leaf, KeyError):
        why = "required field missing"
    elif isinstance(leaf, ValueError):
        why = _VALIDATOR.sub("", str(leaf))  # 'Position.line should be …' → 'should be …'
    else:
        why = f"wrong type ({leaf})" if str(leaf) else "wrong type"
    return f"{_lsp_names(path.lstrip('.'))}: {why}"


def _lsp_names(path: str) -> str:
    """cattrs' attribute names as the protocol spells them: params.text_document.uri → params.textDocument.uri."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path)


def raw_arguments(data: dict, message):
    """An executeCommand's arguments as the client sent them: pygls' converter turns 5 into "5", null into "None"
    and "x" into ("x",), which would hide a wrong type from the decoding."""
    params = data.get("params")
    if data.get("method") != types.WORKSPACE_EXECUTE_COMMAND or not isinstance(params, dict) or "id" not in data:
        return message
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, list):
        kind = "null" if arguments is None else type(arguments).__name__
        return Refused(data, f"params.arguments: must be an array, got {kind}")
    message.params.arguments = arguments
    return message


def decode_command(params: types.ExecuteCommandParams, has_shape: bool) -> None:
    """Replace the command's raw arguments by its decoded shape (raises InvalidArguments)."""
    if has_shape:
        params.arguments = [decode(params.command, params.arguments)]


def answer_for(error: BaseException, method: str) -> types.ResponseError:
    """The error answer to a request whose handler raised `error`; logs internal errors (one line, traceback on
    stderr)."""
    if isinstance(error, JsonRpcException):
        return types.ResponseError(code=error.code, message=error.message)  # no traceback in `data`
    log.error("internal error in %s", method, exc_info=error)
    return types.ResponseError(code=JsonRpcInternalError.CODE, message=f"internal error in {method}: {one_line(error)}")


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300]}" if text else type(error).__name__


def is_bad_input(error: BaseException) -> bool:
    return isinstance(error, (InvalidArguments, JsonRpcInvalidParams))
