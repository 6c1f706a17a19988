"""Two protocol details pygls 2.1 leaves to the server.

- After `shutdown`, pygls drops every request silently, so a client awaiting a reply would hang:
  answer them with InvalidRequest instead (the spec's wording).
- `$/cancelRequest` for `workspace/executeCommand` cancels only pygls' outer future; the command's
  own task keeps running (and nvcc with it). Commands register a hook here that cancels their work.
"""

from __future__ import annotations

import logging
from typing import Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)


class CuteGenProtocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cancel_hooks: dict[object, Callable[[], None]] = {}

    def handle_message(self, message):
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            error = JsonRpcInvalidRequest("the server is shutting down").to_response_error()
            self._send_response(message.id, error=error)
            return
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id):
        super()._handle_cancel_notification(msg_id)
        hook = self.cancel_hooks.pop(msg_id, None)
        if hook is not None:
            hook()
