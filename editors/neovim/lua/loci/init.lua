--- loci for Neovim 0.11+: starts `loci lsp` through `vim.lsp.config` / `vim.lsp.enable`
--- and adds user commands over loci's `workspace/executeCommand` commands.
---
--- ```lua
--- require('loci').setup({})
--- ```
---
--- The server is found in this order: `$LOCI_SERVER_PATH`, then `opts.cmd`, then `loci` on
--- PATH. Commands: `:LociContext {query}`, `:LociWhy`, `:LociImpact [target]`,
--- `:LociRemember[!] {text}`, `:LociDecide {text}`, `:LociConfirm [subject]`. Every command's
--- last answer is kept in `require('loci').last` (`{ command, result }`) for scripts.
--- After a commit the server syncs on its own; the plugin says how many pages are behind
--- the code (`vim.notify`, once per change) and `require('loci').status()` returns it for a
--- statusline.
--- Code actions and code lenses that run a `loci.*` command show its answer the same way
--- (`vim.lsp.commands`), and code lenses are shown and kept current.
local M = {}

--- Neovim filetypes of every language loci parses (`Language::ALL` in
--- server/core/src/lang/mod.rs; the names are `loci_lsp::languages`, checked by
--- server/cli/tests/it/editors_neovim.rs) plus markdown, whose claims loci checks. A `.sh` or
--- `.bash` file is `sh`, a `.tf` file `terraform` (`tf` while it is empty), an Objective-C
--- header `objcpp`.
M.filetypes = {
  'rust',
  'python',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'go',
  'java',
  'c',
  'cpp',
  'cs',
  'ruby',
  'php',
  'kotlin',
  'swift',
  'scala',
  'lua',
  'sh',
  'bash',
  'elixir',
  'haskell',
  'zig',
  'dart',
  'ocaml',
  'julia',
  'r',
  'erlang',
  'terraform',
  'terraform-vars',
  'hcl',
  'solidity',
  'objc',
  'objcpp',
  'proto',
  'vue',
  'svelte',
  'markdown',
}

--- What to install or set when the server is missing.
M.install_hint = 'Install loci (`cargo install --locked --git https://github.com/loci-dev/loci loci-cli`) '
  .. 'so that `loci` is on PATH, or pass `cmd = { "/path/to/loci", "lsp" }` to '
  .. "require('loci').setup(), or set LOCI_SERVER_PATH."

--- The defaults of `setup()`.
M.defaults = {
  --- The server command; nil: `{ $LOCI_SERVER_PATH or 'loci', 'lsp' }`.
  cmd = nil,
  --- Attach to these filetypes.
  filetypes = M.filetypes,
  --- The workspace root is the nearest ancestor with one of these.
  root_markers = { '.loci', '.git' },
  --- `initializationOptions` (camelCase keys of `loci_lsp::InitializationOptions`:
  --- `scan`, `maxFiles`, `parseTimeoutMs`, `debounceMs`, `staleSeverity`,
  --- `falseSeverity`); empty: the server's defaults.
  init_options = {},
  --- Extra environment for the server (e.g. `{ RUST_LOG = 'loci=debug' }`); its stderr goes
  --- to the LSP log (`:lua vim.cmd.edit(vim.lsp.log.get_filename())`).
  cmd_env = nil,
  --- Create the `:Loci*` user commands.
  commands = true,
  --- Show loci's code lenses (memory counts over remembered definitions), refreshed when
  --- the buffer is entered or saved, insert mode is left, or the server asks.
  codelens = true,
}

--- The last command's answer: `{ command = 'loci.why', result = {...} }`.
M.last = nil

--- The pages behind the code per workspace root, from the server's `$/loci/pagesBehind`
--- (sent after every sync: the server syncs on its own when a commit moves HEAD):
--- `{ [root_uri] = { root, head, count, pages, message } }`.
M.behind = {}

--- The server command for `opts`: `$LOCI_SERVER_PATH`, then `opts.cmd`, then `loci` on
--- PATH. Returns the command list, or nil and a message saying what to do.
---@return string[]|nil, string|nil
function M.server_cmd(opts)
  local env = vim.env.LOCI_SERVER_PATH
  if env and vim.trim(env) ~= '' then
    local path = vim.fs.normalize(vim.trim(env))
    if vim.fn.executable(path) == 1 then
      return { path, 'lsp' }
    end
    return nil, ('loci: LOCI_SERVER_PATH is set to %s, which is not executable. Fix or unset it. %s'):format(
      path,
      M.install_hint
    )
  end
  if opts and opts.cmd then
    local bin = vim.fs.normalize(opts.cmd[1])
    if vim.fn.executable(bin) == 1 then
      local cmd = vim.deepcopy(opts.cmd)
      cmd[1] = bin
      return cmd
    end
    return nil, ("loci: the `cmd` given to require('loci').setup() starts with %s, which is not executable. %s"):format(
      bin,
      M.install_hint
    )
  end
  local found = vim.fn.exepath('loci')
  if found ~= '' then
    return { found, 'lsp' }
  end
  return nil, 'loci: the language server was not found (no LOCI_SERVER_PATH, no `cmd` in setup(), no `loci` on PATH). '
    .. M.install_hint
end

--- Configures and enables the `loci` language server. Returns true when the server was found.
function M.setup(opts)
  -- A shallow merge: a list given by the user (filetypes, root_markers, cmd) replaces the
  -- default list instead of being merged into it index by index.
  local o = vim.deepcopy(M.defaults)
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  opts = o
  local cmd, err = M.server_cmd(opts)
  if not cmd then
    vim.notify(err, vim.log.levels.ERROR)
    return false
  end
  -- This plugin shows command answers itself (a float, the quickfix list, a buffer): the
  -- server must not open them too. A `{}` given by the user is an empty object.
  local init_options = vim.deepcopy(opts.init_options or {})
  if init_options.showResults == nil then
    init_options.showResults = false
  end
  local handlers = {}
  local capabilities = nil
  if opts.codelens then
    -- Neovim 0.11 does not handle `workspace/codeLens/refresh`: say it is supported and
    -- refresh the lenses of the client's buffers when the server asks (after a publish
    -- that changed what memory says, so lens and diagnostic agree).
    capabilities = { workspace = { codeLens = { refreshSupport = true } } }
    handlers['workspace/codeLens/refresh'] = function(_, _, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client then
        for _, buf in ipairs(vim.lsp.get_buffers_by_client_id(client.id)) do
          M.refresh_lenses(client, buf)
        end
      end
      return vim.NIL
    end
  end
  handlers['$/loci/pagesBehind'] = function(_, params)
    M.pages_behind(params)
  end
  vim.lsp.config('loci', {
    cmd = cmd,
    cmd_env = opts.cmd_env,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = init_options,
    capabilities = capabilities,
    handlers = handlers,
  })
  vim.lsp.enable('loci')
  M.register_lsp_commands()
  if opts.codelens then
    M.enable_codelens()
  end
  if opts.commands then
    M.create_commands()
  end
  return true
end

-- ---- helpers -------------------------------------------------------------------------

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'loci' })
end

--- The loci client of the workspace `path` is in: the one whose root holds it, the
--- deepest root first; nil when none does.
function M.client_for_path(path)
  local best
  for _, c in ipairs(vim.lsp.get_clients({ name = 'loci' })) do
    local root = c.root_dir and vim.fs.normalize(c.root_dir)
    if root and (path == root or vim.fs.relpath(root, path) ~= nil) then
      if not best or #root > #vim.fs.normalize(best.root_dir) then
        best = c
      end
    end
  end
  return best
end

--- The loci client for `bufnr` (default: current): the one attached to it; else — a
--- quickfix list, a help page, a `loci://` buffer — the client of the workspace holding
--- the buffer's file, the alternate buffer's, or the current directory; else the only
--- loci client. Nil after saying why.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local clients = vim.lsp.get_clients({ name = 'loci', bufnr = bufnr })
  if #clients > 0 then
    return clients[1]
  end
  local candidates = {}
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= '' and vim.bo[bufnr].buftype == '' then
    table.insert(candidates, vim.fs.normalize(name))
  end
  local alt = vim.fn.bufnr('#')
  if alt > 0 and vim.api.nvim_buf_get_name(alt) ~= '' then
    table.insert(candidates, vim.fs.normalize(vim.api.nvim_buf_get_name(alt)))
  end
  table.insert(candidates, vim.fs.normalize(vim.fn.getcwd()))
  for _, path in ipairs(candidates) do
    local c = M.client_for_path(path)
    if c then
      return c
    end
  end
  local all = vim.lsp.get_clients({ name = 'loci' })
  if #all == 1 then
    return all[1]
  end
  notify(
    'loci: no loci language server is attached to this buffer or runs for the current directory '
      .. "(is the file's filetype one of require('loci').filetypes, and did setup() find the server? "
      .. 'See :checkhealth loci)',
    vim.log.levels.ERROR
  )
  return nil
end

--- The current buffer's file relative to the client's root, `/`-separated, or nil.
local function relative(client, bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  if file == '' or not client.root_dir then
    return nil
  end
  local rel = vim.fs.relpath(client.root_dir, vim.fs.normalize(file))
  if rel == nil then
    -- The buffer may name the file through a symlink the root does not use.
    local real = vim.uv.fs_realpath(file)
    local root = vim.uv.fs_realpath(client.root_dir)
    rel = real and root and vim.fs.relpath(root, real) or nil
  end
  return rel
end

--- Runs `command` with its one argument object; `on_result(result)` on success. Errors are
--- shown in the server's words (they name the command and what to do).
function M.exec(client, bufnr, command, args, on_result)
  -- The buffer's file picks the workspace, when it is a file of this client's root (not a
  -- quickfix list or a scratch buffer).
  if args.uri == nil and args.root == nil and relative(client, bufnr) ~= nil then
    args.uri = vim.uri_from_bufnr(bufnr)
  end
  client:request('workspace/executeCommand', { command = command, arguments = { args } }, function(err, result)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
      return
    end
    M.last = { command = command, result = result }
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

local function markdown_lines(result)
  local md = type(result) == 'table' and result.markdown or nil
  if type(md) ~= 'string' then
    return { 'loci returned no markdown' }
  end
  return vim.split(md, '\n', { plain = true })
end

--- Shows markdown in a float at the cursor.
local function float(result)
  vim.lsp.util.open_floating_preview(markdown_lines(result), 'markdown', { border = 'rounded', focus_id = 'loci' })
end

--- Shows markdown in the scratch buffer `loci://NAME` in a split (reused).
local function scratch(name, result)
  local bufname = 'loci://' .. name
  local buf = vim.fn.bufnr(bufname)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, bufname)
    vim.bo[buf].filetype = 'markdown'
    vim.bo[buf].bufhidden = 'hide'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, markdown_lines(result))
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

local function first_line(result)
  return (markdown_lines(result)[1]:gsub('%*%*', ''))
end

--- Splits `path:line` at its last colon; a missing line is 1.
function M.split_at(at)
  local path, line = at:match('^(.*):(%d+)$')
  if path and path ~= '' then
    return path, tonumber(line)
  end
  return at, 1
end

--- Quickfix items for an impact result: one per node, at `via.at` (`path:line`) in the
--- node's file, under `root`.
function M.impact_items(root, result)
  local items = {}
  local nodes = type(result) == 'table' and type(result.result) == 'table' and result.result.nodes or {}
  for _, n in ipairs(nodes) do
    if type(n.id) == 'string' and type(n.path) == 'string' then
      local via = type(n.via) == 'table' and n.via or {}
      local lnum = 1
      if type(via.at) == 'string' then
        local at_path, at_line = M.split_at(via.at)
        if at_path == n.path then
          lnum = at_line
        end
      end
      local text = ('depth %s %s %s: %s'):format(
        tostring(n.depth),
        tostring(via.kind or '?'),
        tostring(via.provenance or '?'),
        n.id
      )
      table.insert(items, { filename = vim.fs.joinpath(root, n.path), lnum = lnum, col = 1, text = text })
    end
  end
  return items
end

--- The innermost document symbol around (0-based) `pos`.
local function innermost(symbols, pos)
  for _, s in ipairs(symbols or {}) do
    local r = s.range
    if r then
      local after = pos.line > r.start.line or (pos.line == r.start.line and pos.character >= r.start.character)
      local before = pos.line < r['end'].line or (pos.line == r['end'].line and pos.character <= r['end'].character)
      if after and before then
        return innermost(s.children, pos) or s
      end
    end
  end
  return nil
end

--- Shows an impact answer in the quickfix list (opened), or says nothing depends on it.
local function show_impact(root, result)
  local items = M.impact_items(root, result)
  local title = first_line(result):gsub('`', '')
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if #items == 0 then
    notify(title .. ': nothing depends on it in the map')
  else
    vim.cmd('botright copen')
  end
end

--- How each command's answer is shown: why in a float, impact in the quickfix list,
--- context and recap in a `loci://` buffer, the rest (writes) as a notification.
function M.show(command, client, result)
  if command == 'loci.why' then
    float(result)
  elseif command == 'loci.impact' then
    show_impact(client.root_dir, result)
  elseif command == 'loci.context' or command == 'loci.recap' or command == 'loci.sync' or command == 'loci.synthesize' then
    scratch(command:sub(#'loci.' + 1), result)
  else
    notify(first_line(result))
  end
end

--- The commands the server names in code actions and code lenses (`loci.why`,
--- `loci.impact`, `loci.confirm`, `loci.resolve`, ...) run through this plugin, which
--- shows their answers (`M.show`): Neovim would otherwise send them and drop the answer.
function M.register_lsp_commands()
  for _, name in ipairs({
    'loci.why',
    'loci.impact',
    'loci.context',
    'loci.recap',
    'loci.confirm',
    'loci.resolve',
    'loci.remember',
    'loci.decide',
    'loci.learn',
    'loci.scan',
    'loci.sync',
    'loci.synthesize',
  }) do
    vim.lsp.commands[name] = function(command, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if not client then
        return
      end
      local args = vim.deepcopy((command.arguments or {})[1] or {})
      M.exec(client, ctx.bufnr or 0, name, args, function(result)
        M.show(name, client, result)
      end)
    end
  end
end

--- Per buffer, the number of the latest code lens request: only its answer is shown.
local lens_requests = {}

--- Asks `client` for `bufnr`'s code lenses and shows them (resolved). Unlike
--- `vim.lsp.codelens.refresh()`, a request made while one runs is not dropped, and an
--- older answer never replaces a newer one.
function M.refresh_lenses(client, bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  lens_requests[bufnr] = (lens_requests[bufnr] or 0) + 1
  local n = lens_requests[bufnr]
  client:request('textDocument/codeLens', { textDocument = vim.lsp.util.make_text_document_params(bufnr) }, function(err, result, ctx)
    if lens_requests[bufnr] == n and vim.api.nvim_buf_is_loaded(bufnr) then
      vim.lsp.codelens.on_codelens(err, result, ctx)
    end
  end, bufnr)
end

--- Shows loci's code lenses in every buffer a loci client attaches to, refreshed on
--- entering the buffer, leaving insert mode and saving (and when the server asks).
function M.enable_codelens()
  local group = vim.api.nvim_create_augroup('loci_codelens', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not client or client.name ~= 'loci' then
        return
      end
      M.refresh_lenses(client, ev.buf)
      vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
        group = group,
        buffer = ev.buf,
        callback = function(e)
          local c = vim.lsp.get_clients({ name = 'loci', bufnr = e.buf })[1]
          if c then
            M.refresh_lenses(c, e.buf)
          end
        end,
      })
    end,
  })
end

-- ---- commands ------------------------------------------------------------------------

--- Runs `command` with `args` on the current buffer's client and shows its answer.
local function run_and_show(command, args)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  M.exec(client, bufnr, command, args, function(result)
    M.show(command, client, result)
  end)
end

--- Handles `$/loci/pagesBehind` (`{ root, head, count, pages, message }`): keeps it for
--- `status()`, and says it once per change of the count (`vim.notify`), with what to run.
function M.pages_behind(params)
  if type(params) ~= 'table' or params.root == nil then
    return
  end
  local before = M.behind[params.root]
  M.behind[params.root] = params
  local count = params.count or 0
  if count > 0 and (before == nil or before.count ~= count) then
    local at = type(params.head) == 'string' and (' at ' .. params.head:sub(1, 12)) or ''
    notify(('loci: %s%s — :LociSynthesize drafts %s, :LociSync lists %s'):format(
      params.message,
      at,
      count == 1 and 'it' or 'them',
      count == 1 and 'it' or 'them'
    ))
  end
  vim.cmd('redrawstatus')
end

--- For a statusline: `'loci: 3 pages behind'` while pages of a workspace root are behind
--- the code, else `''`. E.g. `vim.o.statusline = "%f %= %{v:lua.require'loci'.status()}"`.
function M.status()
  local count = 0
  for _, b in pairs(M.behind) do
    count = count + (b.count or 0)
  end
  if count == 0 then
    return ''
  end
  return ('loci: %d %s behind'):format(count, count == 1 and 'page' or 'pages')
end

--- `:LociContext {query}`: the answer in the `loci://context` buffer.
function M.context(query)
  run_and_show('loci.context', { query = query })
end

--- `:LociSync`: git history into the audit log, then the pages behind the code, in a
--- `loci://sync` buffer.
function M.sync()
  run_and_show('loci.sync', {})
end

--- `:LociSynthesize [path ...]`: drafts the pages of the paths (default: the plan's) with
--- the configured `[synthesis] command`; the server reports each page as `$/progress`.
function M.synthesize(paths)
  local args = {}
  if paths and #paths > 0 then
    args.paths = paths
  end
  run_and_show('loci.synthesize', args)
end

--- `:LociWhy`: the memory behind the cursor's line (`path:line`), in a float.
function M.why()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  local rel = client and relative(client, bufnr)
  if not client or not rel then
    if client then
      notify('loci: :LociWhy needs a file inside the workspace root ' .. tostring(client.root_dir), vim.log.levels.ERROR)
    end
    return
  end
  local target = ('%s:%d'):format(rel, vim.api.nvim_win_get_cursor(0)[1])
  M.exec(client, bufnr, 'loci.why', { target = target }, function(result)
    M.show('loci.why', client, result)
  end)
end

--- `:LociImpact [target]`: what depends on `target` (default: the symbol around the cursor,
--- else the file), in the quickfix list.
function M.impact(target)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  local root = client.root_dir
  local function run(t)
    M.exec(client, bufnr, 'loci.impact', { target = t }, function(result)
      M.show('loci.impact', client, result)
    end)
  end
  if target and target ~= '' then
    return run(target)
  end
  local rel = relative(client, bufnr)
  if not rel then
    notify('loci: :LociImpact without a target needs a file inside ' .. tostring(root), vim.log.levels.ERROR)
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local line = cursor[1] - 1
  local text = vim.api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1] or ''
  local pos = { line = line, character = vim.str_utfindex(text, client.offset_encoding, cursor[2], false) }
  client:request('textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(bufnr) }, function(err, symbols)
    local around = not err and innermost(symbols, pos) or nil
    run(around and around.name or rel)
  end, bufnr)
end

local function subject_or_error(client, bufnr, what)
  local rel = relative(client, bufnr)
  if not rel then
    notify(('loci: %s needs a file inside the workspace root %s'):format(what, tostring(client.root_dir)), vim.log.levels.ERROR)
  end
  return rel
end

--- `:LociRemember {text}`: adds `text` to the current file's memory page (a new revision
--- holding the page's text and then `text`); `:LociRemember! {text}` (`replace`) makes
--- `text` the whole page. Earlier revisions are kept either way.
function M.remember(text, replace)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  local rel = client and subject_or_error(client, bufnr, ':LociRemember')
  if rel then
    local args = { subject = rel, body = text }
    if replace then
      args.replace = true
    end
    M.exec(client, bufnr, 'loci.remember', args, function(result)
      notify(first_line(result))
    end)
  end
end

--- `:LociDecide {text}`: records a decision about the current file.
function M.decide(text)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  local args = { text = text, subject = relative(client, bufnr) }
  M.exec(client, bufnr, 'loci.decide', args, function(result)
    notify(first_line(result))
  end)
end

--- `:LociConfirm [subject]`: the subject's memory (default: the current file's) is still
--- true. Confirming snapshots the code on disk, so the buffer must be saved; a scan first
--- (incremental, and it waits for one already running) makes the map hold what was saved.
function M.confirm(subject)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  local rel = client and ((subject and subject ~= '') and subject or subject_or_error(client, bufnr, ':LociConfirm'))
  if not rel then
    return
  end
  if vim.bo[bufnr].modified then
    notify('loci: save the buffer first (:w): confirming snapshots the code on disk', vim.log.levels.ERROR)
    return
  end
  M.exec(client, bufnr, 'loci.scan', {}, function()
    M.exec(client, bufnr, 'loci.confirm', { subject = rel }, function(result)
      notify(first_line(result))
    end)
  end)
end

--- Creates the `:Loci*` user commands.
function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('LociContext', function(a)
    M.context(a.args)
  end, { nargs = '+', desc = 'loci: ranked context for a question' })
  cmd('LociWhy', function()
    M.why()
  end, { nargs = 0, desc = "loci: the memory behind the cursor's line" })
  cmd('LociImpact', function(a)
    M.impact(a.args)
  end, { nargs = '?', desc = 'loci: what depends on the symbol or file (quickfix)' })
  cmd('LociRemember', function(a)
    M.remember(a.args, a.bang)
  end, { nargs = '+', bang = true, desc = "loci: add to the current file's memory (! replaces it)" })
  cmd('LociDecide', function(a)
    M.decide(a.args)
  end, { nargs = '+', desc = 'loci: record a decision about the current file' })
  cmd('LociConfirm', function(a)
    M.confirm(a.args)
  end, { nargs = '?', desc = "loci: the current file's memory is still true" })
  cmd('LociSync', function()
    M.sync()
  end, { nargs = 0, desc = 'loci: record git history; list the pages behind the code' })
  cmd('LociSynthesize', function(a)
    M.synthesize(a.fargs)
  end, { nargs = '*', complete = 'file', desc = "loci: draft pages with the configured model (default: the plan's)" })
end

return M
