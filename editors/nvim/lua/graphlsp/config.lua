-- The graphlsp server's configuration for Neovim's LSP client: what `lsp/graphlsp.lua` (vim.lsp.config) and the
-- nvim-lspconfig entry (lua/lspconfig/configs/graphlsp.lua) both return.
local M = {}

local REFRESH = 'workspace/diagnostic/refresh'

--- The server asks for the diagnostics again (workspace/diagnostic/refresh) when an op library open beside the
--- models changes what they report. Neovim 0.11 has no handler for it: pull each attached buffer's diagnostics again.
function M.refresh_diagnostics(_, _, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client then
    for bufnr in pairs(client.attached_buffers) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
        client:request('textDocument/diagnostic', params, nil, bufnr)
      end
    end
  end
  return vim.NIL
end

--- A fresh copy of the default configuration (a `vim.lsp.Config`).
---@return table
function M.default()
  local config = {
    cmd = { 'graphlsp', 'serve' },
    filetypes = { 'onnxtxt', 'onnxop' }, -- models, and op libraries (the declarations of custom ops)
    root_markers = { 'graphlsp.toml', 'pyproject.toml', '.git' },
    -- The server reads the `graphlsp` section: at start (initializationOptions, filled in below from these
    -- settings), when it asks (workspace/configuration) and when it changes (workspace/didChangeConfiguration).
    settings = {
      graphlsp = {
        inlayHints = true, -- type-and-shape hints; also turn them on with vim.lsp.inlay_hint.enable()
      },
    },
    before_init = function(params, config)
      local section = (config.settings or {}).graphlsp
      local given = params.initializationOptions
      if section ~= nil and (given == nil or (type(given) == 'table' and next(given) == nil)) then
        params.initializationOptions = section
      end
    end,
  }
  if vim.lsp.handlers[REFRESH] == nil then -- Neovim's own handler, where it has one, is the one to use
    config.capabilities = { workspace = { diagnostics = { refreshSupport = true } } }
    config.handlers = { [REFRESH] = M.refresh_diagnostics }
  end
  return config
end

return M
