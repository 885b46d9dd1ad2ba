-- Op libraries (*.onnxop): `#` comments (gc, gcc), words are names; `gd` goes to where a name is declared or bound
-- (LSP definition: an input, attribute or type constraint, or the input shape that binds a dim symbol).
vim.bo.commentstring = '# %s'
vim.bo.comments = ':#'
vim.bo.iskeyword = '@,48-57,_'
local undo = 'setlocal commentstring< comments< iskeyword<'
if vim.g.graphlsp_no_maps ~= true then
  vim.keymap.set('n', 'gd', function()
    vim.lsp.buf.definition()
  end, { buffer = true, desc = 'graphlsp: go to where the name under the cursor is declared or bound' })
  undo = undo .. " | silent! nunmap <buffer> gd"
end
vim.b.undo_ftplugin = (vim.b.undo_ftplugin and (vim.b.undo_ftplugin .. ' | ') or '') .. undo
