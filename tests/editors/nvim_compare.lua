-- :GraphlspCompare in a headless Neovim against the real server, run by test_nvim_compare.py: the model at HEAD
-- beside the model as it is now, both in diff mode. GRAPHLSP_CMD: the server command; GRAPHLSP_MODEL: the model.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result, step = H.result({})

local function session()
  H.start_server()
  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_MODEL))
  local buf = vim.api.nvim_get_current_buf()
  H.attached(buf)
  step('open')
  vim.cmd('GraphlspCompare')
  local wins = vim.api.nvim_tabpage_list_wins(0)
  result.windows = #wins
  result.diff = {}
  result.texts = {}
  result.names = {}
  for _, w in ipairs(wins) do
    local b = vim.api.nvim_win_get_buf(w)
    result.diff[#result.diff + 1] = vim.wo[w].diff
    result.texts[#result.texts + 1] = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
    result.names[#result.names + 1] = vim.api.nvim_buf_get_name(b)
  end
  step('compare')
  H.stop_servers()
  result.done = true
end

H.run(result, session)
