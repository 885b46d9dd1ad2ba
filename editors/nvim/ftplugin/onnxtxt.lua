-- ONNX text: `#` comments (gc, gcc), words are names.
vim.bo.commentstring = '# %s'
vim.bo.comments = ':#'
vim.bo.iskeyword = '@,48-57,_'
vim.b.undo_ftplugin = (vim.b.undo_ftplugin and (vim.b.undo_ftplugin .. ' | ') or '')
  .. 'setlocal commentstring< comments< iskeyword<'
