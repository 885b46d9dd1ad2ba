-- A minimal Neovim (>= 0.11) config for graphlsp, also what capture.sh runs:
--   nvim -u editors/nvim/example/init.lua examples/broken.onnxtxt
-- In your own config, put editors/nvim on 'runtimepath' (or install it with your plugin manager) and keep the
-- lines below it. GRAPHLSP_CMD (a JSON array) overrides the server command, e.g. '["python", "-P", "-m", "graphlsp.cli", "serve"]'.
local plugin = vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, 'S').source:sub(2))))
vim.opt.runtimepath:prepend(plugin)

vim.diagnostic.config({ virtual_text = true, signs = true, severity_sort = true })
vim.o.number = true
vim.o.signcolumn = 'yes'
vim.o.winborder = 'rounded' -- hover and signature windows with a border (Neovim >= 0.11)

require('graphlsp').setup({
  cmd = vim.env.GRAPHLSP_CMD and vim.json.decode(vim.env.GRAPHLSP_CMD) or nil, -- default: { 'graphlsp', 'serve' }
  inlay_hints = vim.env.GRAPHLSP_INLAY_HINTS == '1',
})
