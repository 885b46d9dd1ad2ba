-- graphlsp: binary ONNX models (*.onnx) open as read-only text views rendered by the graphlsp server
-- (lua/graphlsp/view.lua). Set `vim.g.graphlsp_binary_view = false` before this runs to keep *.onnx as they are.
if vim.g.loaded_graphlsp_view or vim.g.graphlsp_binary_view == false or vim.fn.has('nvim-0.11') ~= 1 then
  return
end
vim.g.loaded_graphlsp_view = true
require('graphlsp.view').setup()
require('graphlsp.compare').setup()
