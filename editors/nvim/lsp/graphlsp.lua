-- graphlsp, the language server for ONNX text (*.onnxtxt, *.onnxtext) and op libraries (*.onnxop), for
-- Neovim >= 0.11:
--   vim.lsp.enable('graphlsp')
-- Override any field with vim.lsp.config('graphlsp', { cmd = { '/path/to/venv/bin/graphlsp', 'serve' } }).
---@type vim.lsp.Config
return require('graphlsp.config').default()
