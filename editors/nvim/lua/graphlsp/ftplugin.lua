-- What the ftplugins of graphlsp's filetypes (ftplugin/onnxtxt.lua, ftplugin/onnxop.lua) set in a buffer, and how
-- `:setlocal filetype=` undoes it (b:undo_ftplugin).
local M = {}

--- `#` comments (gc, gcc), words are names; `gd` goes to the definition of the name under the cursor (LSP
--- definition; `gd_desc` says what that is in the filetype), unless g:graphlsp_no_maps is true; with `graph`,
--- :GraphlspGraph shows the model's graph (lua/graphlsp/graph.lua).
---@param opts { gd_desc: string, graph?: boolean }
function M.setup(opts)
  vim.bo.commentstring = '# %s'
  vim.bo.comments = ':#'
  vim.bo.iskeyword = '@,48-57,_'
  local undo = 'setlocal commentstring< comments< iskeyword<'
  if vim.g.graphlsp_no_maps ~= true then
    vim.keymap.set('n', 'gd', function()
      vim.lsp.buf.definition()
    end, { buffer = true, desc = opts.gd_desc })
    undo = undo .. ' | silent! nunmap <buffer> gd'
  end
  if opts.graph then
    require('graphlsp.graph').buffer_command(vim.api.nvim_get_current_buf())
    undo = undo .. ' | silent! delcommand -buffer GraphlspGraph'
  end
  vim.b.undo_ftplugin = (vim.b.undo_ftplugin and (vim.b.undo_ftplugin .. ' | ') or '') .. undo
end

return M
