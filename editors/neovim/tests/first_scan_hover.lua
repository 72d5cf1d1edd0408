-- First-scan hover availability in a real Neovim (issue 33's benchmark), run headless by
-- `server/cli/tests/it/editors_neovim.rs` on a copy of CPython's standard library (or a real
-- subset of it) with no `.loci` store: opening `json/decoder.py` starts `loci lsp`, which
-- starts the first scan ("loci: scanning" `$/progress`). Hovers on the definition of
-- `raw_decode` are sent one after another from the moment the client is initialized until
-- one answers, then once more after the scan has ended. On Neovim's clock
-- (`vim.uv.hrtime()`, milliseconds from `:edit`): when the client was initialized, when the
-- first answer came and whether the scan was running then, when the scan ended. Every wait
-- is bounded, so nvim always finishes; what came back is written as JSON for the Rust side.
--
-- Usage: nvim --headless --clean -l first_scan_hover.lua PLUGIN_DIR FILE OUT SCAN_TIMEOUT_MS
local plugin, file, out, scan_timeout = arg[1], arg[2], arg[3], tonumber(arg[4])
local result = { errors = {}, progress = {} }

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

  local t0 = vim.uv.hrtime()
  local function ms()
    return (vim.uv.hrtime() - t0) / 1e6
  end
  -- The scan's `$/progress`: running between its begin and its end.
  local scanning, scan_ended = false, false
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local value = ev.data.params.value
      if type(value) ~= 'table' then
        return
      end
      if value.kind == 'begin' then
        table.insert(result.progress, value.title)
        if value.title == 'loci: scanning' then
          scanning = true
          result.scan_begin_ms = ms()
        end
      elseif value.kind == 'end' and scanning then
        scanning, scan_ended = false, true
        result.scan_end_ms = ms()
      end
    end,
  })

  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client
  if not vim.wait(30000, function()
    client = vim.lsp.get_clients({ name = 'loci', bufnr = buf })[1]
    return client ~= nil and client.initialized
  end, 5) then
    fail('the loci client did not attach within 30 s')
    return
  end
  result.initialized_ms = ms()

  local row, col
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, true)) do
    local at = l:find('    def raw_decode(', 1, true)
    if at == 1 then
      row, col = i - 1, #'    def '
    end
  end
  if not row then
    fail('no `def raw_decode(` in ' .. file)
    return
  end
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = { line = row, character = col },
  }
  local function hover()
    local sent = ms()
    local answer = client:request_sync('textDocument/hover', params, 10000, buf)
    local value = answer and answer.result and answer.result.contents and answer.result.contents.value
    return value, sent, ms()
  end

  -- Hovers one after another until one answers (bounded: 30 s).
  local attempts = 0
  repeat
    attempts = attempts + 1
    local value, sent, got = hover()
    if value then
      result.first = { text = value, sent_ms = sent, answered_ms = got, scanning = scanning, attempts = attempts }
    end
  until result.first or ms() > 30000
  if not result.first then
    fail('no hover answer within 30 s of :edit (' .. attempts .. ' hovers)')
    return
  end

  -- After the scan: the map's answer.
  if not vim.wait(scan_timeout, function()
    return scan_ended
  end, 5) then
    fail(string.format('the first scan did not end within %d ms (progress: %s)', scan_timeout, vim.inspect(result.progress)))
    return
  end
  local value, sent, got = hover()
  result.after = { text = value or vim.NIL, sent_ms = sent, answered_ms = got }
end)
if not ok then
  fail(tostring(err))
end
finish()
