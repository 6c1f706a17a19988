"""The language-server adapter: pygls features that call the engine and present its results.

One module per feature (server, config, diagnostics, hover, code lens, code actions, commands);
`session` holds the engine objects, `convert` turns the result model into LSP types.
"""
