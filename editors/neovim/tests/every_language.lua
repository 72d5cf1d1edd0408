-- The Neovim plugin on every language loci parses, run headless by
-- `server/cli/tests/it/editors_neovim.rs` on a scanned copy of fixtures/polyglot whose
-- Kotlin file has a memory about `Cart.add()`: each file given is opened, gets its
-- filetype from Neovim's own detection, and must get the loci client and its document
-- symbols; then an edit of `add`'s body in the buffer makes the memory stale (a
-- `loci` diagnostic). What came back is written as JSON for the Rust side to assert on.
--
-- Usage: nvim --headless --clean -l every_language.lua PLUGIN_DIR ROOT OUT KOTLIN_FILE FILE...
-- (FILEs relative to ROOT).
local plugin, root, out, kotlin = arg[1], arg[2], arg[3], arg[4]
local files = {}
for i = 5, #arg do
  table.insert(files, arg[i])
end
local result = { errors = {}, notifications = {}, files = {} }

local function fail(msg)
  table.insert(result.errors, msg)
end

vim.notify = function(msg, level)
  table.insert(result.notifications, { msg = msg, level = level })
end

local function finish()
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qa!')
end

--- The loci client of `buf`, once attached and initialized (at most 15 s).
local function attached_client(buf)
  local client
  vim.wait(15000, function()
    client = vim.lsp.get_clients({ name = 'loci', bufnr = buf })[1]
    return client ~= nil and client.initialized
  end, 20)
  return client
end

--- The names of a documentSymbol answer, depth first, children as `parent/child`.
local function symbol_names(symbols, prefix, list)
  for _, s in ipairs(symbols or {}) do
    local name = prefix .. s.name
    table.insert(list, name)
    symbol_names(s.children, name .. '/', list)
  end
  return list
end

local ok, err = pcall(function()
  vim.opt.rtp:prepend(plugin)
  vim.cmd('filetype on')
  local loci = require('loci')
  result.setup = loci.setup({})
  -- :checkhealth loci says every language is attached.
  vim.cmd('checkhealth loci')
  result.health = vim.tbl_filter(function(line)
    return line:find('filetypes') ~= nil
  end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  vim.cmd('bwipeout!')

  for _, rel in ipairs(files) do
    vim.cmd.edit(vim.fn.fnameescape(root .. '/' .. rel))
    local buf = vim.api.nvim_get_current_buf()
    local entry = { path = rel, filetype = vim.bo[buf].filetype, attached = false }
    local client = attached_client(buf)
    if client then
      entry.attached = true
      local response = client:request_sync(
        'textDocument/documentSymbol',
        { textDocument = vim.lsp.util.make_text_document_params(buf) },
        15000,
        buf
      )
      if response and response.err == nil then
        entry.symbols = symbol_names(response.result, '', {})
      else
        fail(rel .. ': documentSymbol failed: ' .. vim.inspect(response))
      end
    end
    table.insert(result.files, entry)
  end

  -- Stale memory in Kotlin: nothing before the edit, one warning on `add` after it.
  vim.cmd.edit(vim.fn.fnameescape(kotlin))
  local buf = vim.api.nvim_get_current_buf()
  result.kotlin_filetype = vim.bo[buf].filetype
  if not attached_client(buf) then
    fail('the loci client did not attach to the Kotlin file within 15 s')
    return
  end
  local function loci_diagnostics()
    local list = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'loci' then
        table.insert(list, { lnum = d.lnum, col = d.col, severity = d.severity, code = d.code, message = d.message })
      end
    end
    return list
  end
  result.before = loci_diagnostics()
  local edited = false
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, true)) do
    -- The body of `add`: at least two of an item now.
    if line:find('max%(quantity, 1%)') then
      vim.api.nvim_buf_set_lines(buf, i - 1, i, true, { (line:gsub('max%(quantity, 1%)', 'max(quantity, 2)')) })
      edited = true
    end
  end
  if not edited then
    fail('no `max(quantity, 1)` line in ' .. kotlin)
    return
  end
  if not vim.wait(15000, function() return #loci_diagnostics() > 0 end, 20) then
    fail('no loci diagnostic within 15 s of the edit')
  end
  result.stale = loci_diagnostics()
end)
if not ok then
  fail(tostring(err))
end
finish()
