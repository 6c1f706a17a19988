"""The language server with the layouts feature wired in as the lead will wire it (tests only).

`server.py` gets `layouts.register(server)` among its features; `hover.py`'s handler, before it returns
None, asks `layouts.layout_hover(ls, uri, position)`. This launcher does both from outside, so that the
feature is tested over real LSP before the merge.
"""

from __future__ import annotations

from lsprotocol import types

from cutegen.lsp import layouts
from cutegen.lsp.server import create_server


def main() -> None:
    server = create_server()
    layouts.register(server)
    features = server.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_HOVER]

    def hover(params: types.HoverParams):  # stored handlers are already bound to the server
        ls = server
        found = original(params)
        if found is not None:
            return found
        text = layouts.layout_hover(ls, params.text_document.uri, params.position)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    features[types.TEXT_DOCUMENT_HOVER] = hover
    server.start_io()


if __name__ == "__main__":
    main()
