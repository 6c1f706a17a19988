"""Three protocol details pygls 2.1 leaves to the server.

- After `shutdown`, pygls drops every request silently, so a client awaiting a reply would hang:
  answer them with InvalidRequest instead (the spec's wording).
- `$/cancelRequest` for `workspace/executeCommand` cancels only pygls' outer future; the command's
  own task keeps running (and nvcc with it). Commands register a hook here that cancels their work.
- A request whose params do not fit their type gets no answer at all from pygls (the error is raised while the
  message is read), and a handler's exception is answered with its traceback: every request gets an answer
  here, InvalidParams naming the field for bad input, one line for an internal error (requests.py).
"""

from __future__ import annotations

import logging
from typing import Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcRequestCancelled
from pygls.protocol import LanguageServerProtocol

from cutegen.lsp import requests
from cutegen.lsp.arguments import SHAPES, InvalidArguments

log = logging.getLogger(__name__)
# Notifications that name a request or a progress by an id: the field, which must be an integer or a string.
_ID_FIELDS = {types.CANCEL_REQUEST: "id", types.WINDOW_WORK_DONE_PROGRESS_CANCEL: "token",
              types.PROGRESS: "token"}


class CuteGenProtocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cancel_hooks: dict[object, Callable[[], None]] = {}
        self._methods: dict[object, str] = {}  # request id → method, for the one-line error answers

    def structure_message(self, data):
        try:
            message = super().structure_message(data)
        except JsonRpcException as error:
            return requests.refused(data, error)
        return requests.raw_arguments(data, message)

    def handle_message(self, message):
        if isinstance(message, requests.Refused):
            self._refuse(message)
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            error = JsonRpcInvalidRequest("the server is shutting down").to_response_error()
            self._send_response(message.id, error=error)
            return
        if method in _ID_FIELDS and not isinstance(getattr(message.params, _ID_FIELDS[method], None), (int, str)):
            # lsprotocol types these as int | str but cattrs passes any JSON through, and the handler's dict
            # lookup would fail with a traceback on stderr (the client's output channel): one line instead
            self._log_line(f"ignored {method}: params.{_ID_FIELDS[method]} must be an integer or a string",
                           types.MessageType.Warning)
            return
        if method == types.WORKSPACE_EXECUTE_COMMAND and getattr(message, "id", None) is not None:
            try:
                requests.decode_command(message.params, message.params.command in SHAPES)
            except InvalidArguments as error:
                self._send_response(message.id, error=error.to_response_error())
                return
        super().handle_message(message)

    def _refuse(self, message: "requests.Refused") -> None:
        if message.is_request and message.id is not None:  # a request always has an id: the check is for mypy
            self._send_response(message.id, error=message.error())
        else:
            self._log_line(f"ignored {message.method or 'a message'}: {message.why}", types.MessageType.Warning)

    def _handle_request(self, msg_id, method_name, params):
        self._methods[msg_id] = method_name
        super()._handle_request(msg_id, method_name, params)
        if msg_id not in self._request_futures:  # answered already (a synchronous handler, an unknown method)
            self._methods.pop(msg_id, None)

    def _send_handler_result(self, future, *, msg_id):
        method = self._methods.pop(msg_id, "a request")
        error = None if future.cancelled() else future.exception()
        if error is None or isinstance(error, JsonRpcRequestCancelled):
            super()._send_handler_result(future, msg_id=msg_id)
            return
        self._request_futures.pop(msg_id, None)
        self._send_response(msg_id, error=requests.answer_for(error, method))
        if not isinstance(error, JsonRpcException):
            self._log_line(f"internal error in {method}: {requests.one_line(error)} (traceback on the server's "
                           "stderr)", types.MessageType.Error)

    def _log_line(self, text: str, kind: types.MessageType) -> None:
        try:
            self.notify(types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=kind, message=text))
        except Exception:  # never let reporting break the answer
            log.exception("cannot log %s", text)

    def _handle_cancel_notification(self, msg_id):
        super()._handle_cancel_notification(msg_id)
        hook = self.cancel_hooks.pop(msg_id, None)
        if hook is not None:
            hook()
