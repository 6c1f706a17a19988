-- A second, independent LSP client for the tests: headless Neovim (0.7+) starts the CuTeGen server,
-- opens a kernel with the given settings, waits for its diagnostics, asks for a hover there (at the first error, or
-- at CUTEGEN_NVIM_HOVER_AT until the layouts are computed) and writes what it got as JSON.
-- Parameters come from the environment (CUTEGEN_NVIM_*), set by test_neovim.py.
local env = function(name) return os.getenv("CUTEGEN_NVIM_" .. name) end
local file, root, out = env("FILE"), env("ROOT"), env("OUT")
local uri = vim.uri_from_fname(file)
local result = { messages = {}, logs = {}, publishes = {} }

local client_id = vim.lsp.start_client({
  name = "cutegen",
  cmd = { env("PYTHON"), "-m", "cutegen", "lsp" },
  cmd_env = { PYTHONPATH = env("PYTHONPATH") },
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
  -- Settings both ways a Neovim user gives them (docs/neovim.md): the JSON in CUTEGEN_NVIM_INIT as
  -- init_options (initializationOptions), and CUTEGEN_NVIM_SETTINGS as `settings`. Neovim 0.7 neither
  -- advertises workspace/configuration nor sends `settings` by itself: on_init pushes them with
  -- didChangeConfiguration, as nvim-lspconfig does.
  init_options = vim.fn.json_decode(env("INIT") or "{}"),
  settings = vim.fn.json_decode(env("SETTINGS") or "{}"),
  on_init = function(client)
    if next(client.config.settings) then
      client.notify("workspace/didChangeConfiguration", { settings = client.config.settings })
    end
  end,
  handlers = {
    ["textDocument/publishDiagnostics"] = function(_, params)
      if params.uri == uri then table.insert(result.publishes, params) end
    end,
    ["window/showMessage"] = function(_, params) table.insert(result.messages, params.message) end,
    ["window/logMessage"] = function(_, params) table.insert(result.logs, params.message) end,
  },
  on_exit = function(code) result.exit_code = code end,
})
result.started = client_id ~= nil

vim.cmd("edit " .. vim.fn.fnameescape(file))
vim.lsp.buf_attach_client(0, client_id)
result.got_diagnostics = vim.wait(120000, function() return #result.publishes > 0 end, 50)

-- The hover at CUTEGEN_NVIM_HOVER_AT ("line:character", 0-based), asked again until it no longer says the
-- layouts are being computed (the probe build that follows a clean check of a saved version).
local function layout_hover(at)
  local line, character = at:match("^(%d+):(%d+)$")
  local params = { textDocument = { uri = uri }, position = { line = tonumber(line), character = tonumber(character) } }
  result.layout_hovers = {}
  local deadline = vim.loop.now() + 180000
  while vim.loop.now() < deadline do
    local replies = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 10000) or {}
    local reply = replies[client_id]
    local value = reply and reply.result and reply.result.contents and reply.result.contents.value or vim.NIL
    if result.layout_hovers[#result.layout_hovers] ~= value then table.insert(result.layout_hovers, value) end
    if value ~= vim.NIL and not value:find("being computed", 1, true) then return end
    vim.wait(500)
  end
end

if result.got_diagnostics and env("HOVER_AT") then
  layout_hover(env("HOVER_AT"))
elseif result.got_diagnostics then
  local first = nil  -- the first error (a settings probe may add warnings)
  for _, d in ipairs(result.publishes[1].diagnostics) do
    if first == nil and d.severity == 1 then first = d end
  end
  if first then
    local params = { textDocument = { uri = uri }, position = first.range.start }
    result.hover = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 10000)
  end
end

local f = io.open(out, "w")
f:write(vim.fn.json_encode(result))
f:close()
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return result.exit_code ~= nil end, 50)
vim.cmd("qa!")
