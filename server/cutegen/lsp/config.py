"""Settings: the `cutegen` section, from every place a client may put it.

Layers, later ones on top: `initializationOptions` (the only place Neovim's stock client and many
others reliably send settings), the section pushed in didChangeConfiguration's params, and the
section pulled with workspace/configuration. A client that answers the pull with nothing keeps
the layers below; one that advertises the request but never answers costs PULL_WAIT_S once and is
not asked again. A bad value keeps its default and is reported once; it never stops the server.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

from cutegen.settings import Settings
from cutegen.workspace_trust import screen

if TYPE_CHECKING:
    from cutegen.lsp.server import CuteGenServer

SECTION = "cutegen"
PULL_WAIT_S = 2.0  # a client answers workspace/configuration in milliseconds, or never


@dataclass
class Sources:
    """The raw `cutegen` sections as each channel last gave them."""
    initial: dict = field(default_factory=dict)  # initializationOptions
    pushed: dict = field(default_factory=dict)  # didChangeConfiguration's settings
    client_answers: bool = True  # False once a workspace/configuration request went unanswered
    refused: set[str] = field(default_factory=set)  # workspace values refused (workspace_trust.py), shown once


def section_of(value: object) -> object:
    """The `cutegen` section of a settings object: `{"cutegen": {...}}`, or the section itself
    (`init_options = { extraFlags = ... }` in an nvim-lspconfig setup). Anything else is returned
    as is, so that apply() can report it."""
    if isinstance(value, dict) and SECTION in value:
        return value[SECTION]
    return value


def layered(*layers: object) -> object:
    """The layers merged key by key, later ones winning; a layer that is not an object is returned
    alone (to be reported), and None layers are skipped."""
    merged: dict = {}
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, dict):
            return layer
        merged.update(layer)
    return merged


async def pull(ls: CuteGenServer) -> object:
    """The section the client answers workspace/configuration with (None if it cannot or will not)."""
    src = ls.config_sources
    if not (src.client_answers and ls.supports("workspace.configuration")):
        return None
    try:
        items = [types.ConfigurationItem(section=SECTION)]
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=PULL_WAIT_S)
    except TimeoutError:
        src.client_answers = False
        ls.log(f"the client left workspace/configuration unanswered for {PULL_WAIT_S:.0f} s; using "
               "initializationOptions and didChangeConfiguration only", types.MessageType.Warning)
        return None
    except Exception as e:  # a client that fails the request still gets a working server
        ls.log(f"workspace/configuration failed ({e!r}); using the other settings sources", types.MessageType.Warning)
        return None
    return values[0] if values else None


def current(ls: CuteGenServer, pulled: object) -> object:
    src = ls.config_sources
    if not src.initial:
        initial = section_of(getattr(ls, "initialization_options", None))
        src.initial = initial if isinstance(initial, dict) else {}
    return layered(src.initial, src.pushed, pulled)


def apply(ls: CuteGenServer, raw) -> bool:
    """Use the settings in `raw`; returns whether they changed."""
    problems = []
    if raw is not None and not isinstance(raw, dict):
        problems.append(f"the '{SECTION}' settings must be an object, not {raw!r}")
        raw = None
    # the server's own rule: whatever scope the client enforces, a workspace's file cannot set these
    raw, refusals = screen(raw or {}, ls.session.roots)
    for refusal in refusals:
        if refusal.message() not in ls.config_sources.refused:  # once, not at every reload
            ls.config_sources.refused.add(refusal.message())
            ls.show(refusal.message(), types.MessageType.Warning)
    settings, more = Settings.from_dict(raw)
    problems += more
    if problems:
        ls.show("CuTeGen settings: " + "; ".join(problems) + " (the default is used instead).",
                types.MessageType.Warning)
    return ls.session.apply(settings)


async def reload(ls: CuteGenServer, pushed: object = None) -> bool:
    pushed = section_of(pushed)
    if isinstance(pushed, dict):
        ls.config_sources.pushed = pushed
    return apply(ls, current(ls, await pull(ls)))


def register(server: CuteGenServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CuteGenServer, params: types.DidChangeConfigurationParams):
        if await reload(ls, params.settings):
            for uri in ls.open_uris():  # new flags or a new toolchain: results may differ
                ls.checks.schedule(uri)
