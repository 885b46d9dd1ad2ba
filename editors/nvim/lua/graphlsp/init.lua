-- graphlsp for Neovim >= 0.11: the `onnxtxt` and `onnxop` filetypes and the language server.
--
--   require('graphlsp').setup()                       -- filetype + vim.lsp.config + vim.lsp.enable
--   require('graphlsp').setup({ cmd = { '/path/to/venv/bin/graphlsp', 'serve' }, inlay_hints = true })
--
-- Without setup(), `vim.lsp.enable('graphlsp')` does the same with the defaults (lsp/graphlsp.lua).
local M = {}

--- Registers the filetypes: *.onnxtxt and *.onnxtext are `onnxtxt`; op libraries, *.onnxop, are `onnxop`.
function M.filetype()
  vim.filetype.add({ extension = { onnxtxt = 'onnxtxt', onnxtext = 'onnxtxt', onnxop = 'onnxop' } })
end

local function check_version()
  if vim.fn.has('nvim-0.11') ~= 1 then
    error('graphlsp: Neovim >= 0.11 is required (vim.lsp.config / vim.lsp.enable); use nvim-lspconfig on older ones')
  end
end

--- Sets up the filetype and the server.
---@param opts? { cmd?: string[], settings?: table, inlay_hints?: boolean, lsp?: vim.lsp.Config, binary_view?: boolean }
---  cmd: the server command (default { 'graphlsp', 'serve' });
---  settings: merged into the `graphlsp` section sent to the server (e.g. { inlayHints = false });
---  inlay_hints: turn Neovim's inlay hints on in the server's buffers when it attaches;
---  lsp: any other vim.lsp.Config fields (root_markers, on_attach, capabilities...);
---  binary_view: open *.onnx as read-only text views rendered by the server (default true; plugin/graphlsp.lua
---  sets this up already when the plugin is on 'runtimepath').
function M.setup(opts)
  check_version()
  opts = opts or {}
  M.filetype()
  if opts.binary_view ~= false then
    require('graphlsp.view').setup()
  end
  local config = vim.deepcopy(opts.lsp or {})
  if opts.cmd then
    config.cmd = opts.cmd
  end
  if opts.settings then
    config.settings = vim.tbl_deep_extend('force', config.settings or {}, { graphlsp = opts.settings })
  end
  vim.lsp.config('graphlsp', config)
  if opts.inlay_hints then
    vim.api.nvim_create_autocmd('LspAttach', {
      group = vim.api.nvim_create_augroup('graphlsp.inlay_hints', { clear = true }),
      callback = function(args)
        local client = vim.lsp.get_client_by_id(args.data.client_id)
        if client and client.name == 'graphlsp' then
          vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
        end
      end,
    })
  end
  vim.lsp.enable('graphlsp')
end

return M
