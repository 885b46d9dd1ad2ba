-- ONNX text: `#` comments (gc, gcc), words are names; `gd` goes to the value's producer (LSP definition);
-- :GraphlspGraph shows the model's graph.
vim.bo.commentstring = '# %s'
vim.bo.comments = ':#'
vim.bo.iskeyword = '@,48-57,_'
local undo = 'setlocal commentstring< comments< iskeyword<'
if vim.g.graphlsp_no_maps ~= true then
  vim.keymap.set('n', 'gd', function()
    vim.lsp.buf.definition()
  end, { buffer = true, desc = 'graphlsp: go to the producer of the value under the cursor' })
  undo = undo .. " | silent! nunmap <buffer> gd"
end
-- :GraphlspGraph [file]: the model's graph as a page, opened in the browser (lua/graphlsp/graph.lua)
require('graphlsp.graph').buffer_command(vim.api.nvim_get_current_buf())
undo = undo .. ' | silent! delcommand -buffer GraphlspGraph'
vim.b.undo_ftplugin = (vim.b.undo_ftplugin and (vim.b.undo_ftplugin .. ' | ') or '') .. undo
