-- Keystroke → final diagnostic in a real Neovim (issue 33's benchmark), run headless by
-- `server/cli/tests/it/editors_neovim.rs` on a copy of CPython's `json/decoder.py` whose memory
-- page names `JSONDecoder.raw_decode()`. Neovim types bursts of 50 changes, 30 ms apart (timers
-- paced from the burst's start, `nvim_buf_set_text` appending `x` to `return obj, end` in
-- `raw_decode`'s body), through its own LSP client with its default settings (including its
-- 150 ms `debounce_text_changes`). Per burst, on Neovim's clock (`vim.uv.hrtime()`): from
-- the last change to the `DiagnosticChanged` that leaves loci's stale-memory diagnostic in
-- the buffer from a `publishDiagnostics` for the burst's final version. Every wait is bounded
-- (10 s after a burst's last change), so nvim always finishes. The latencies and the final
-- diagnostics are written as JSON for the Rust side, with when Neovim sent the final
-- `didChange` (after its debounce) for each burst.
--
-- Usage: nvim --headless --clean -l bursts.lua PLUGIN_DIR FILE OUT BURSTS
local plugin, file, out, bursts = arg[1], arg[2], arg[3], tonumber(arg[4])
local CHANGES, INTERVAL_MS, DEADLINE_MS = 50, 30, 10000
local result = { errors = {}, bursts = {} }

local function fail(msg)
  table.insert(result.errors, msg)
end

vim.notify = function() end

local function finish()
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qa!')
end

local ok, err = pcall(function()
  vim.opt.rtp:prepend(plugin)
  vim.cmd('filetype on')
  require('loci').setup({})

  -- The version of the last publishDiagnostics for the file, seen before Neovim applies it.
  local published
  local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  vim.lsp.handlers['textDocument/publishDiagnostics'] = function(e, params, ctx, config)
    if params and vim.uri_to_fname(params.uri) == file then
      published = params.version
    end
    return publish(e, params, ctx, config)
  end

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
  result.debounce_text_changes = client.flags.debounce_text_changes or vim.NIL
  -- When Neovim sends each version (its debounce decides), to split the latency in two.
  local sent = {}
  local notify = client.notify
  client.notify = function(self, method, params)
    if method == 'textDocument/didChange' then
      sent[params.textDocument.version] = vim.uv.hrtime()
    end
    return notify(self, method, params)
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

  local row
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, true)) do
    if l == '        return obj, end' then
      row = i - 1
    end
  end
  if not row then
    fail('no line `        return obj, end` in ' .. file)
    return
  end
  -- Nothing is stale before the first keystroke.
  result.before = loci_diagnostics()

  local burst -- the burst being typed: { version, last_at, done_at, diagnostics }
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    buffer = buf,
    callback = function()
      if burst and burst.last_at and not burst.done_at and published == burst.version then
        local now = vim.uv.hrtime()
        local list = loci_diagnostics()
        if #list > 0 then
          burst.done_at = now
          burst.diagnostics = list
        end
      end
    end,
  })

  local latencies = {}
  for b = 1, bursts do
    local this = {}
    burst = this
    local start = vim.uv.hrtime()
    local function change(i)
      local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
      vim.api.nvim_buf_set_text(buf, row, #line, row, #line, { 'x' })
      if i == CHANGES then
        this.version = vim.lsp.util.buf_versions[buf]
        this.last_at = vim.uv.hrtime()
        return
      end
      -- The pace of typing, from the burst's start (the benchmark's input, not a wait).
      local delay = (start + i * INTERVAL_MS * 1e6 - vim.uv.hrtime()) / 1e6
      vim.defer_fn(function()
        change(i + 1)
      end, math.max(0, math.floor(delay)))
    end
    change(1)
    vim.wait(CHANGES * INTERVAL_MS + DEADLINE_MS + 1000, function()
      return this.done_at ~= nil or (this.last_at ~= nil and vim.uv.hrtime() - this.last_at > DEADLINE_MS * 1e6)
    end, 5)
    if not this.done_at then
      fail(string.format(
        'burst %d: no loci diagnostic for version %s within %d ms of the last change (last publish: version %s)',
        b, tostring(this.version), DEADLINE_MS, tostring(published)))
      return
    end
    local ms = (this.done_at - this.last_at) / 1e6
    table.insert(latencies, ms)
    local sent_ms = sent[this.version] and (sent[this.version] - this.last_at) / 1e6 or vim.NIL
    table.insert(result.bursts, { version = this.version, latency_ms = ms, sent_ms = sent_ms, diagnostics = this.diagnostics })
    result.typing_ms = result.typing_ms or {}
    table.insert(result.typing_ms, (this.last_at - start) / 1e6)
  end
  burst = nil
  result.changes = CHANGES
  result.interval_ms = INTERVAL_MS
end)
if not ok then
  fail(tostring(err))
end
finish()
