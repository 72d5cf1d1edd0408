-- A real-client session with Neovim's built-in LSP client, run headless by
-- `server/cli/tests/it/nvim.rs`: start `loci lsp` on a workspace, open a file, ask for hover
-- and document symbols, edit the buffer, ask again, and write what came back as JSON.
--
-- Usage: nvim --headless --clean -l session.lua LOCI_BIN ROOT FILE OUT
local bin, root, file, out = arg[1], arg[2], arg[3], arg[4]
local result = { errors = {} }

local function fail(msg)
  table.insert(result.errors, msg)
end

vim.cmd.edit(vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = 'loci',
  cmd = { bin, 'lsp' },
  root_dir = root,
}, { bufnr = buf })
if not client_id then
  fail('vim.lsp.start returned nil')
end

-- Wait for the server to initialize and attach.
local attached = vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(client_id)
  return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, client_id)
end, 20)
if not attached then
  fail('the client did not attach within 10 s')
end
local client = vim.lsp.get_client_by_id(client_id)
if client then
  result.position_encoding = client.offset_encoding
  result.commands = client.server_capabilities.executeCommandProvider
      and client.server_capabilities.executeCommandProvider.commands
end

local function request(method, params)
  local responses = vim.lsp.buf_request_sync(buf, method, params, 10000)
  if not responses or not responses[client_id] then
    fail(method .. ': no response')
    return nil
  end
  local r = responses[client_id]
  if r.err then
    fail(method .. ': ' .. vim.inspect(r.err))
  end
  return r.result
end

local doc = { textDocument = vim.lsp.util.make_text_document_params(buf) }
-- `target` is on line 1 (zero-based), after a line with non-ASCII text.
local hover = request('textDocument/hover', {
  textDocument = doc.textDocument,
  position = { line = 1, character = 4 },
})
result.hover = hover and hover.contents and hover.contents.value or vim.NIL

local symbols = request('textDocument/documentSymbol', doc)
result.symbols = {}
for _, s in ipairs(symbols or {}) do
  table.insert(result.symbols, { name = s.name, line = s.selectionRange.start.line,
    character = s.selectionRange.start.character })
end

-- Edit through Neovim (incremental sync computed by the client): rename `target`.
vim.api.nvim_buf_set_text(buf, 1, 3, 1, 9, { 'renamed' })
local debug = request('workspace/executeCommand', {
  command = 'loci.debug.text',
  arguments = { { uri = vim.uri_from_bufnr(buf) } },
})
result.buffer_matches = debug ~= nil
    and debug.text == table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), '\n') .. '\n'
result.version = debug and debug.version or vim.NIL
local after = request('textDocument/documentSymbol', doc)
result.after = {}
for _, s in ipairs(after or {}) do
  table.insert(result.after, s.name)
end

if client then
  client:stop()
  vim.wait(5000, function() return client:is_stopped() end, 20)
end
local f = assert(io.open(out, 'w'))
f:write(vim.json.encode(result))
f:close()
vim.cmd('qa!')
