-- The plugin's configuration pieces, checked headless without a server (test_nvim.py):
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_config.lua'
-- GRAPHLSP_PROJECT is a folder with a pyproject.toml and a model in a subfolder; the result goes to GRAPHLSP_RESULT.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result = {}

local function check()
  result.filetype = {
    onnxtxt = vim.filetype.match({ filename = 'model.onnxtxt' }),
    onnxtext = vim.filetype.match({ filename = 'model.onnxtext' }),
    onnxop = vim.filetype.match({ filename = 'acme.onnxop' }),
  }
  -- vim.lsp.config resolves lsp/graphlsp.lua from 'runtimepath'
  local cfg = vim.lsp.config.graphlsp
  result.default = {
    cmd = cfg.cmd,
    filetypes = cfg.filetypes,
    root_markers = cfg.root_markers,
    settings = cfg.settings,
  }
  local params = {}
  cfg.before_init(params, cfg)
  result.initialization_options = params.initializationOptions

  -- the nvim-lspconfig entry (found as lspconfig.configs.graphlsp)
  local entry = require('lspconfig.configs.graphlsp')
  local model = vim.env.GRAPHLSP_PROJECT .. '/models/m.onnxtxt'
  result.lspconfig = {
    cmd = entry.default_config.cmd,
    filetypes = entry.default_config.filetypes,
    root_dir = entry.default_config.root_dir(model),
    single_file_support = entry.default_config.single_file_support,
    has_docs = type(entry.docs.description) == 'string',
  }

  -- setup() with options
  require('graphlsp').setup({ cmd = { 'my-graphlsp', 'serve' }, settings = { inlayHints = false }, inlay_hints = true })
  local after = vim.lsp.config.graphlsp
  result.setup = {
    cmd = after.cmd,
    filetypes = after.filetypes,
    settings = after.settings,
    enabled = vim.lsp.is_enabled and vim.lsp.is_enabled('graphlsp') or nil,
    inlay_autocmd = #vim.api.nvim_get_autocmds({ group = 'graphlsp.inlay_hints', event = 'LspAttach' }),
  }
  vim.lsp.enable('graphlsp', false) -- `my-graphlsp` does not exist: start nothing for the buffer below

  -- the ftplugin and the syntax file
  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_PROJECT .. '/plain.onnxtxt'))
  result.buffer = {
    filetype = vim.bo.filetype,
    commentstring = vim.bo.commentstring,
    syntax = vim.b.current_syntax,
  }
  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_PROJECT .. '/acme.onnxop'))
  result.library_buffer = {
    filetype = vim.bo.filetype,
    commentstring = vim.bo.commentstring,
    syntax = vim.b.current_syntax,
  }
end

H.run(result, check)
