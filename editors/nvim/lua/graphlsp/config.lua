-- The graphlsp server's configuration for Neovim's LSP client: what `lsp/graphlsp.lua` (vim.lsp.config) and the
-- nvim-lspconfig entry (lua/lspconfig/configs/graphlsp.lua) both return.
local M = {}

--- A fresh copy of the default configuration (a `vim.lsp.Config`).
---@return table
function M.default()
  return {
    cmd = { 'graphlsp', 'serve' },
    filetypes = { 'onnxtxt' },
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
end

return M
