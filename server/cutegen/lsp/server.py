"""The CuTeGen language server: the server object, its lifecycle, and `serve()` (stdio or TCP).

Features live in sibling modules, each with a `register(server)`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidRequest, JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer

from cutegen import __version__
from cutegen.lsp import (
    arguments, background, code_actions, code_lens, commands, config, diagnostics, hover, layouts, profile_lens,
    requests,
)
from cutegen.lsp import versions
from cutegen.lsp.agent import AgentService
from cutegen.lsp.documents import path_of
from cutegen.lsp.protocol import CuteGenProtocol
from cutegen.session import Session
from cutegen.lsp.store import Published

SETTINGS_WAIT_S = 10.0  # a check waits this long for the first settings before using defaults


class CuteGenServer(LanguageServer):
    protocol: CuteGenProtocol  # what __init__ hands pygls: the cancel hooks and the malformed-request answers

    def __init__(self) -> None:
        super().__init__("cutegen", __version__, protocol_cls=CuteGenProtocol, converter_factory=arguments.converter)
        self.session = Session()
        self.published = Published()
        self.checks = diagnostics.Checker(self)
        self.agent = AgentService(self)
        self.loop = background.Loop(self)  # test → time → profile after each clean save
        self.layout_refresh = layouts.HintRefresh(self)  # inlay hints asked for again when a layout probe ends
        self.layout_service = layouts.service(self, self.layout_refresh)  # probes start in layouts.register
        self.lens = profile_lens.Lens()  # which kernel's profile a header's hot lines belong to
        self.initialization_options: object = None
        self.client_name = ""  # from initialize's clientInfo: code actions ask whether it can open settings
        self.config_sources = config.Sources()  # the settings as each channel last gave them
        self._settings_loaded: asyncio.Event | None = None

    # -- state ------------------------------------------------------------------------------

    def open_document(self, uri: str):
        """The editor's copy of `uri` if the client has it open, else None."""
        return self.workspace.text_documents.get(unquote(uri))

    def open_uris(self) -> list[str]:
        return [doc.uri for doc in self.workspace.text_documents.values()]

    def supports(self, capability: str) -> bool:
        """A client capability by dotted path, e.g. 'workspace.code_lens.refresh_support'."""
        return bool(get_capability(self.client_capabilities, capability, False))

    def settings_event(self) -> asyncio.Event:
        if self._settings_loaded is None:  # created lazily: it must belong to the running loop
            self._settings_loaded = asyncio.Event()
        return self._settings_loaded

    async def settings_loaded(self) -> None:
        if self.settings_event().is_set():
            return
        try:
            await asyncio.wait_for(self.settings_event().wait(), SETTINGS_WAIT_S)
        except TimeoutError:
            pass

    def update_roots(self) -> None:
        roots = [path_of(f.uri) for f in self.workspace.folders.values()]
        if self.workspace.root_uri:
            roots.append(path_of(self.workspace.root_uri))
        self.session.roots = list(dict.fromkeys(r for r in roots if r is not None))

    # -- talking to the user ------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.log(message, kind)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_exception(self, what: str) -> None:
        self.log(f"{what}:\n{traceback.format_exc()}", types.MessageType.Error)

    def toolchain_failed(self, error: str) -> None:
        if self.session.first_report(error):  # not once per keystroke
            self.show(error, types.MessageType.Error)

    def refresh_code_lens(self) -> None:
        if self.supports("workspace.code_lens.refresh_support"):
            self.workspace_code_lens_refresh(None)

    def report_server_error(self, error: Exception, source) -> None:
        # pygls' default shows every notification error as a popup; one log line is enough (the traceback goes
        # to stderr), and the server goes on answering. The client's own mistakes were answered already.
        if requests.is_bad_input(error) or isinstance(error, (JsonRpcMethodNotFound, JsonRpcInvalidRequest)):
            return
        logging.getLogger(__name__).error("internal error (%s)", getattr(source, "__name__", source), exc_info=error)
        try:
            self.log(f"internal error ({getattr(source, '__name__', source)}): {requests.one_line(error)} "
                     "(traceback on the server's stderr)", types.MessageType.Error)
        except Exception:
            logging.getLogger(__name__).exception("cannot report %s", error)


def _register_lifecycle(server: CuteGenServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: CuteGenServer, params: types.InitializeParams):
        ls.initialization_options = params.initialization_options
        ls.client_name = params.client_info.name if params.client_info else ""  # code actions: can it open settings?

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CuteGenServer, params: types.InitializedParams):
        ls.update_roots()
        # The first hover stays fast. A daemon thread, not the loop's executor: exit would wait for the load
        # (up to a second of YAML and imports), and a server shut down right after it started has no use for it.
        threading.Thread(target=hover.warm_knowledge, name="cutegen-knowledge", daemon=True).start()
        try:
            await config.reload(ls)
        finally:
            ls.settings_event().set()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: CuteGenServer, params: types.DidChangeWorkspaceFoldersParams):
        ls.update_roots()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: CuteGenServer, params):
        ls.checks.cancel_all()  # kill running compilers so that exit is immediate
        ls.loop.shutdown()  # and a background build, ncu and the worker's call
        ls.session.close()


def create_server() -> CuteGenServer:
    server = CuteGenServer()
    _register_lifecycle(server)
    for feature in (config, diagnostics, hover, code_lens, code_actions, commands, layouts, profile_lens, background,
                    versions):
        feature.register(server)
    return server


def serve(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    # stdout carries the protocol: logging must go to stderr only.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="cutegen-lsp %(levelname)s %(message)s")
    server = create_server()
    if tcp:
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0
