-- graphlsp for nvim-lspconfig's setup() framework:
--   require('lspconfig').graphlsp.setup({})
-- (nvim-lspconfig finds this file on 'runtimepath' as lspconfig.configs.graphlsp.) On Neovim >= 0.11 prefer
-- vim.lsp.enable('graphlsp'), which reads lsp/graphlsp.lua.
local default = require('graphlsp.config').default()

return {
  default_config = {
    cmd = default.cmd,
    filetypes = default.filetypes,
    root_dir = function(fname)
      return vim.fs.root(fname, default.root_markers)
    end,
    single_file_support = true,
    settings = default.settings,
    before_init = default.before_init,
    capabilities = default.capabilities,
    handlers = default.handlers,
  },
  docs = {
    description = [[
graphlsp: language server and linter for ONNX models in ONNX text syntax (`*.onnxtxt`, `*.onnxtext`):
diagnostics, shape hovers, inlay hints, definition, references, rename, symbols, semantic tokens, completion,
formatting and quick fixes; and for op libraries (`*.onnxop`): diagnostics, hover, definition, completion, symbols.

Install it from a clone of its repository (`pip install /path/to/graphlsp`); the server runs as `graphlsp serve`
(stdio): `graphlsp` on PATH, or its full path in `cmd`.
]],
  },
}
