-- After a commit made outside Neovim (here with `git commit` from the script, as a terminal
-- would), an edit is all the server needs to notice that HEAD moved: Neovim on Linux
-- watches no files. The server syncs on its own and the plugin says how many pages are
-- behind the code, once, and keeps it for `require('loci').status()`. Run headless by
-- `server/cli/tests/it/editors_neovim.rs`; what came back is written as JSON.
--
-- Usage: nvim --headless --clean -l after_commit.lua PLUGIN_DIR ROOT FILE OUT
local plugin, root, file, out = arg[1], arg[2], arg[3], arg[4]
local result = { errors = {}, notifications = {} }

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

local ok, err = pcall(function()
  vim.opt.rtp:prepend(plugin)
  vim.cmd('filetype on')
  local loci = require('loci')
  loci.setup({})
  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client
  if not vim.wait(15000, function()
    client = vim.lsp.get_clients({ name = 'loci', bufnr = buf })[1]
    return client ~= nil and client.initialized
  end, 20) then
    fail('the loci client did not attach within 15 s')
    return
  end
  result.watches = vim.tbl_get(client.capabilities, 'workspace', 'didChangeWatchedFiles', 'dynamicRegistration')
  result.status_before = loci.status()

  -- A commit in a terminal changes the remembered function.
  local path = root .. '/src/store.rs'
  local text = table.concat(vim.fn.readfile(path), '\n')
  text = text:gsub('HashMap::new%(%)', 'HashMap::with_capacity(capacity)', 1)
  vim.fn.writefile(vim.split(text, '\n', { plain = true }), path)
  local git = { 'git', '-c', 'user.name=Ann', '-c', 'user.email=ann@example.com', '-c', 'commit.gpgsign=false' }
  vim.fn.system(vim.list_extend(vim.deepcopy(git), { '-C', root, 'commit', '-q', '-am', 'open reserves capacity' }))
  result.head = vim.trim(vim.fn.system({ 'git', '-C', root, 'rev-parse', 'HEAD' }))

  -- Keep editing (another line of the buffer): the server checks HEAD after the burst.
  vim.api.nvim_buf_set_lines(buf, 0, 0, true, { '// a comment' })
  if not vim.wait(15000, function() return loci.status() ~= '' end, 20) then
    fail('no pages behind the code within 15 s of the edit')
  end
  result.status = loci.status()
  result.notifications_after = vim.tbl_map(function(n) return n.msg end, result.notifications)
  -- A second burst of edits: HEAD has not moved, nothing more is said.
  vim.api.nvim_buf_set_lines(buf, 0, 1, true, {})
  vim.lsp.buf_request_sync(buf, 'textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(buf) }, 5000)
  result.notifications_end = #result.notifications
  client:stop()
  vim.wait(5000, function() return client:is_stopped() end, 20)
end)
if not ok then
  fail('script error: ' .. tostring(err))
end
finish()
