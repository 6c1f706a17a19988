"""The test LSP clients' converter (tests/lsp and tests/agent).

lsprotocol 2025.0.0 reads every CodeAction that has a `command` as a bare Command (its union hook only asks
whether the key exists); real clients do not, so the test clients must not either.
"""

from __future__ import annotations

from typing import Union

from lsprotocol import types
from pygls.protocol import default_converter


def code_action_converter():
    converter = default_converter()

    def command_or_action(obj, _):
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)
    return converter
