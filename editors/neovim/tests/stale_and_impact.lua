-- The Neovim plugin end to end, run headless by `server/cli/tests/it/editors_neovim.rs` on a
-- copy of fixtures/polyglot/rust that already has a memory about `Store::open()`:
-- `require('loci').setup({})` finds the server through LOCI_SERVER_PATH, attaches to a Rust
-- buffer, an edit of `open`'s body makes the memory stale (a `loci` diagnostic), `:LociWhy`
-- explains it, `:LociImpact` fills the quickfix list, saving and `:LociConfirm` clear the
-- diagnostic. What came back is written as JSON for the Rust side to assert on.
--
-- Usage: nvim --headless --clean -l stale_and_impact.lua PLUGIN_DIR ROOT FILE OUT
local plugin, root, file, out = arg[1], arg[2], arg[3], arg[4]
local result = { errors = {}, notifications = {} }

local function fail(msg)
  table.insert(result.errors, msg)
end

-- Record what the plugin tells the user instead of printing it.
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

  -- Discovery: LOCI_SERVER_PATH first; a wrong `cmd` is an error naming it.
  local env = vim.env.LOCI_SERVER_PATH
  vim.env.LOCI_SERVER_PATH = nil
  local none, none_err = loci.server_cmd({ cmd = { '/nonexistent/loci', 'lsp' } })
  result.bad_cmd = { cmd = none or vim.NIL, err = none_err or vim.NIL }
  vim.env.LOCI_SERVER_PATH = env

  result.setup = loci.setup({})
  result.cmd = vim.lsp.config.loci.cmd
  result.root_markers = vim.lsp.config.loci.root_markers
  result.filetypes = loci.filetypes

  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  local client
  local attached = vim.wait(15000, function()
    client = vim.lsp.get_clients({ name = 'loci', bufnr = buf })[1]
    return client ~= nil and client.initialized
  end, 20)
  if not attached then
    fail('the loci client did not attach within 15 s')
    return
  end
  result.root_dir = client.root_dir

  local function loci_diagnostics()
    local out_list = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'loci' then
        table.insert(out_list, {
          lnum = d.lnum,
          col = d.col,
          severity = d.severity,
          code = d.code,
          message = d.message,
        })
      end
    end
    return out_list
  end

  -- Code lenses are on: the memory's count over `open`, from the same state as the
  -- diagnostics (lens titles as resolved).
  local function lens_titles()
    local titles = {}
    for _, l in ipairs(vim.lsp.codelens.get(buf)) do
      if l.command and l.command.title then
        table.insert(titles, { line = l.range.start.line, title = l.command.title })
      end
    end
    return titles
  end
  local function wait_lens(title)
    return vim.wait(15000, function()
      for _, t in ipairs(lens_titles()) do
        if t.title == title then
          return true
        end
      end
      return false
    end, 20)
  end
  if not wait_lens('1 memory · 0 stale') then
    fail('no code lens "1 memory · 0 stale" within 15 s of attaching: ' .. vim.inspect(lens_titles()))
  end
  result.lens_before = lens_titles()

  -- The memory is current until the code changes.
  result.before = loci_diagnostics()

  -- Edit the body of `open` (line 27, one-based): the memory about it goes stale.
  local line = vim.api.nvim_buf_get_lines(buf, 26, 27, true)[1]
  local edited = line:gsub('HashMap::new%(%)', 'HashMap::with_capacity(capacity)')
  vim.api.nvim_buf_set_lines(buf, 26, 27, true, { edited })
  if not vim.wait(15000, function() return #loci_diagnostics() > 0 end, 20) then
    fail('no loci diagnostic within 15 s of the edit')
  end
  result.stale = loci_diagnostics()
  -- The lens follows the diagnostic (the server asks for a refresh when it publishes).
  if not wait_lens('1 memory · 1 stale') then
    fail('the code lens did not say "1 stale" within 15 s of the diagnostic: ' .. vim.inspect(lens_titles()))
  end
  result.lens_stale = lens_titles()

  -- The hover on `open` shows the memory and that it is stale.
  local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = { line = 25, character = 12 },
  }, 10000)
  local h = hover and hover[client.id] and hover[client.id].result
  result.hover = h and h.contents and h.contents.value or vim.NIL

  local function wait_last(command)
    loci.last = nil
    return vim.wait(10000, function() return loci.last ~= nil and loci.last.command == command end, 20)
  end

  -- Code actions on the diagnostic show what they answer: "why" in a float, "impact" in
  -- the quickfix list (Neovim alone sends the command and drops the answer).
  local function floats()
    local texts = {}
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then
        table.insert(texts, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, 1, false)[1])
      end
    end
    return texts
  end
  local function code_action(pattern)
    vim.lsp.buf.code_action({
      filter = function(a)
        return a.title:find(pattern) ~= nil
      end,
      apply = true,
    })
  end
  vim.api.nvim_win_set_cursor(0, { 26, 12 })
  loci.last = nil
  code_action('^loci: why')
  if vim.wait(10000, function() return loci.last ~= nil and loci.last.command == 'loci.why' and #floats() > 0 end, 20) then
    result.action_why = floats()[1]
  else
    fail('the "why" code action showed no float')
  end
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      vim.api.nvim_win_close(w, true)
    end
  end
  vim.fn.setqflist({}, 'r', { title = '', items = {} })
  vim.api.nvim_win_set_cursor(0, { 26, 12 })
  loci.last = nil
  code_action('^loci: impact')
  if vim.wait(10000, function() return loci.last ~= nil and loci.last.command == 'loci.impact' and #vim.fn.getqflist() > 0 end, 20) then
    result.action_impact = vim.fn.getqflist({ title = 1 }).title
  else
    fail('the "impact" code action filled no quickfix list')
  end
  -- :LociContext from the quickfix window finds the workspace's client.
  vim.cmd('botright copen')
  result.context_from = vim.bo.buftype
  loci.last = nil
  vim.cmd('LociContext how is a store opened')
  if vim.wait(10000, function() return loci.last ~= nil and loci.last.command == 'loci.context' end, 20) then
    result.context_from_quickfix = vim.fn.bufnr('loci://context') ~= -1
  else
    fail(':LociContext from the quickfix window gave no answer: ' .. vim.inspect(result.notifications[#result.notifications]))
  end
  vim.cmd('cclose')
  vim.cmd('only')
  vim.cmd.buffer(buf)

  -- :LociWhy on the line of `open`.
  vim.api.nvim_win_set_cursor(0, { 26, 12 })
  vim.cmd('LociWhy')
  if wait_last('loci.why') then
    result.why = loci.last.result.markdown
  else
    fail(':LociWhy gave no answer')
  end

  -- :LociImpact with the cursor in `open`: the symbol; on line 1: the file.
  local function impact(cmd)
    vim.fn.setqflist({}, 'r', { title = '', items = {} })
    vim.cmd(cmd)
    if not wait_last('loci.impact') then
      fail(cmd .. ' gave no answer')
    end
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    local items = {}
    for _, it in ipairs(qf.items) do
      table.insert(items, {
        file = vim.fs.relpath(root, vim.api.nvim_buf_get_name(it.bufnr)) or vim.api.nvim_buf_get_name(it.bufnr),
        lnum = it.lnum,
        text = it.text,
      })
    end
    vim.cmd('cclose')
    vim.cmd.buffer(buf)
    return { title = qf.title, items = items }
  end
  vim.api.nvim_win_set_cursor(0, { 27, 10 })
  result.impact_symbol = impact('LociImpact')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  result.impact_file = impact('LociImpact')

  -- :LociContext answers, or says in the server's words that it cannot yet.
  local notes_before = #result.notifications
  loci.last = nil
  vim.cmd('LociContext how is a store opened')
  vim.wait(10000, function()
    return (loci.last ~= nil and loci.last.command == 'loci.context') or #result.notifications > notes_before
  end, 20)
  if loci.last ~= nil and loci.last.command == 'loci.context' then
    result.context = { markdown = loci.last.result.markdown, buffer = vim.fn.bufnr('loci://context') ~= -1 }
  else
    result.context = { error = result.notifications[#result.notifications].msg }
  end
  vim.cmd.buffer(buf)

  -- :LociConfirm refuses an unsaved buffer; after saving it confirms (the memory is current
  -- again and the diagnostic goes away).
  vim.cmd('LociConfirm')
  result.confirm_unsaved = result.notifications[#result.notifications].msg
  vim.cmd('silent write')
  vim.cmd('LociConfirm')
  if wait_last('loci.confirm') then
    result.confirm = loci.last.result.markdown
  else
    fail(':LociConfirm gave no answer')
  end
  if not vim.wait(15000, function() return #loci_diagnostics() == 0 end, 20) then
    fail('the stale diagnostic is still there after :LociConfirm')
  end
  result.after_confirm = loci_diagnostics()

  -- :LociRemember writes the next revision of this file's page; :LociDecide records a decision.
  vim.cmd('LociRemember `Store::open()` starts empty and sized for `capacity` items.')
  if wait_last('loci.remember') then
    result.remember = loci.last.result.markdown
    result.remember_body = loci.last.result.result.revision.body
    result.remember_notification = result.notifications[#result.notifications].msg
  else
    fail(':LociRemember gave no answer')
  end
  vim.cmd('LociDecide keep the store in memory: persistence is a Backend')
  if wait_last('loci.decide') then
    result.decide = loci.last.result.markdown
  else
    fail(':LociDecide gave no answer')
  end

  -- :LociSync records history (here a snapshot: no git) and shows it in a buffer.
  vim.cmd('LociSync')
  if wait_last('loci.sync') then
    -- The server says how many pages are behind the code after every sync.
    vim.wait(5000, function() return loci.status() ~= '' end, 20)
    result.sync = {
      first = vim.split(loci.last.result.markdown, '\n', { plain = true })[4],
      buffer = vim.fn.bufnr('loci://sync') ~= -1,
      status = loci.status(),
      notification = result.notifications[#result.notifications].msg,
    }
  else
    fail(':LociSync gave no answer')
  end

  client:stop()
  vim.wait(5000, function() return client:is_stopped() end, 20)
end)
if not ok then
  fail('script error: ' .. tostring(err))
end
finish()
