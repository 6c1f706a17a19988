"""Settings: the `cutegen` section, pulled with workspace/configuration and pulled again on
didChangeConfiguration. A bad value keeps its default and is reported once; it never stops the server."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from cutegen.settings import Settings

SECTION = "cutegen"


async def pull(ls, pushed: object = None) -> object:
    """The raw section from the client (None if it has none). Clients that cannot be asked give it
    in didChangeConfiguration's params or, at start, in initializationOptions."""
    if not ls.supports("workspace.configuration"):
        source = pushed if isinstance(pushed, dict) else ls.initialization_options
        return source.get(SECTION) if isinstance(source, dict) else None
    try:
        items = [types.ConfigurationItem(section=SECTION)]
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=10)
    except Exception as e:  # a client that fails the request still gets a working server
        ls.log(f"workspace/configuration failed ({e!r}); using defaults", types.MessageType.Warning)
        return None
    return values[0] if values else None


def apply(ls, raw) -> bool:
    """Use the settings in `raw`; returns whether they changed."""
    problems = []
    if raw is not None and not isinstance(raw, dict):
        problems.append(f"the '{SECTION}' settings must be an object, not {raw!r}")
        raw = None
    settings, more = Settings.from_dict(raw)
    problems += more
    if problems:
        ls.show("CuTeGen settings: " + "; ".join(problems) + " (the default is used instead).",
                types.MessageType.Warning)
    return ls.session.apply(settings)


async def reload(ls, pushed: object = None) -> bool:
    return apply(ls, await pull(ls, pushed))


def register(server) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls, params: types.DidChangeConfigurationParams):
        if await reload(ls, params.settings):
            for uri in ls.open_uris():  # new flags or a new toolchain: results may differ
                ls.checks.schedule(uri)
