-- :GraphlspGraph in a headless Neovim against the real graphlsp server, run by test_nvim_graph.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_graph.lua'
-- GRAPHLSP_CMD: the server command (JSON array); GRAPHLSP_FILE: a text model (edited, not saved, before the
-- graph); GRAPHLSP_BINARY: a binary model; GRAPHLSP_OUT: a folder for the pages; GRAPHLSP_RESULT: where the JSON
-- result goes. vim.ui.open is recorded instead of starting a browser. Every wait has a timeout.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result, step = H.result({ opened = {}, messages = {} })

vim.ui.open = function(path)
  result.opened[#result.opened + 1] = path
  return { wait = function() end }, nil
end
H.record_messages(result.messages)

local function graph(args)
  local before = #result.opened
  vim.cmd('GraphlspGraph ' .. args)
  H.wait_for('the page to be written and opened', function()
    return #result.opened > before
  end)
  return result.opened[#result.opened]
end

local function session()
  H.start_server()

  -- a text model, edited in the buffer only: the page shows the buffer's graph
  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_FILE))
  local buf = vim.api.nvim_get_current_buf()
  H.attached(buf)
  step('command', vim.fn.exists(':GraphlspGraph') == 2)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local close = #lines
  while lines[close] ~= '}' do
    close = close - 1
  end
  vim.api.nvim_buf_set_lines(buf, close - 1, close - 1, false, { '  extra = Relu (h)' })
  step('extra_line', close - 1) -- 0-based
  step('modified', vim.bo[buf].modified)
  step('text_page', graph(vim.fn.fnameescape(vim.env.GRAPHLSP_OUT .. '/text.html')))
  step('default_page', graph(''))

  -- a binary model's view
  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_BINARY))
  local view = vim.api.nvim_get_current_buf()
  H.attached(view)
  step('view_filetype', vim.bo[view].filetype)
  step('binary_page', graph(vim.fn.fnameescape(vim.env.GRAPHLSP_OUT .. '/binary.html')))
  step('view_lines', vim.api.nvim_buf_get_lines(view, 0, -1, false))

  -- no server on the buffer: said so, nothing opened
  vim.cmd.enew()
  vim.bo.filetype = 'onnxtxt'
  local before = #result.opened
  vim.lsp.stop_client(vim.lsp.get_clients({ name = 'graphlsp' }))
  H.wait_for('the server to stop', function()
    return #vim.lsp.get_clients({ name = 'graphlsp' }) == 0
  end)
  pcall(vim.cmd, 'GraphlspGraph') -- an error message (which headless Neovim raises)
  step('refused', #result.opened == before)
  step('done', true)
end

H.run(result, session)
