--- `:checkhealth loci`: is the server found, does it run, is it attached here.
local M = {}

function M.check()
  local loci = require('loci')
  vim.health.start('loci')
  if vim.fn.has('nvim-0.11') == 0 then
    vim.health.error('Neovim 0.11 or newer is required (vim.lsp.config / vim.lsp.enable)')
  else
    vim.health.ok('Neovim ' .. tostring(vim.version()))
  end
  local cfg = vim.lsp.config.loci
  local cmd, err = loci.server_cmd(cfg and cfg.cmd and { cmd = cfg.cmd } or nil)
  if not cmd then
    vim.health.error(err)
    return
  end
  local out = vim.system({ cmd[1], '--version' }, { text = true }):wait(5000)
  if out.code == 0 then
    vim.health.ok(('server: %s (%s)'):format(cmd[1], vim.trim(out.stdout or '')))
  else
    vim.health.error(('server %s --version failed: %s'):format(cmd[1], vim.trim(out.stderr or '')))
  end
  if not cfg then
    vim.health.warn("require('loci').setup() has not run: the server is not configured")
  elseif not vim.lsp.is_enabled('loci') then
    vim.health.warn("the loci config exists but is not enabled (vim.lsp.enable('loci'))")
  end
  if cfg and cfg.filetypes then
    -- A `filetypes` list copied from an older setup leaves languages out.
    local missing = vim.tbl_filter(function(ft)
      return not vim.tbl_contains(cfg.filetypes, ft)
    end, loci.filetypes)
    if #missing == 0 then
      vim.health.ok(('filetypes: %d, every language loci maps and markdown'):format(#cfg.filetypes))
    else
      vim.health.warn(
        ('filetypes given to setup() leave out %s: loci maps these files but does not attach to them'):format(
          table.concat(missing, ', ')
        )
      )
    end
  end
  local clients = vim.lsp.get_clients({ name = 'loci' })
  if #clients == 0 then
    vim.health.info('no loci client is running (open a file of: ' .. table.concat(loci.filetypes, ', ') .. ')')
  end
  for _, c in ipairs(clients) do
    vim.health.ok(('client %d: root %s, position encoding %s'):format(c.id, tostring(c.root_dir), c.offset_encoding))
  end
  vim.health.info('server log (stderr): ' .. vim.lsp.log.get_filename() .. '; more detail with cmd_env = { RUST_LOG = "loci=debug" }')
end

return M
