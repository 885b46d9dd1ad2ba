-- A Neovim session against the real graphlsp server, run headless by test_nvim.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_session.lua'
-- with GRAPHLSP_CMD (the server command, a JSON array), GRAPHLSP_FILE (a copy of examples/broken.onnxtxt) and
-- GRAPHLSP_RESULT (where the JSON result goes). Every wait has a timeout; the session always ends with :cquit.
local TIMEOUT = tonumber(vim.env.GRAPHLSP_TIMEOUT_MS or '20000')
local result = { steps = {} }

local function step(name, value)
  result.steps[#result.steps + 1] = name
  if value ~= nil then
    result[name] = value
  end
end

local function wait_for(what, predicate)
  local ok = vim.wait(TIMEOUT, predicate, 50)
  if not ok then
    error('timed out after ' .. TIMEOUT .. ' ms waiting for ' .. what, 0)
  end
end

local function codes(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    out[#out + 1] = { code = d.code, lnum = d.lnum, col = d.col, message = d.message }
  end
  table.sort(out, function(a, b)
    return a.lnum < b.lnum
  end)
  return out
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function find(bufnr, pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local s, e = line:find(pattern)
    if s then
      return i - 1, s - 1, e
    end
  end
  error('not in the buffer: ' .. pattern, 0)
end

local function floating_windows()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      wins[#wins + 1] = win
    end
  end
  return wins
end

local function session()
  step('nvim_version', tostring(vim.version()))
  -- the documented setup (editors/nvim/README.md), with the server command of the test run
  vim.lsp.config('graphlsp', { cmd = vim.json.decode(vim.env.GRAPHLSP_CMD) })
  vim.lsp.enable('graphlsp')

  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_FILE))
  local buf = vim.api.nvim_get_current_buf()
  step('filetype', vim.bo[buf].filetype)
  step('commentstring', vim.bo[buf].commentstring)

  wait_for('the graphlsp client to attach', function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' }) > 0
  end)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  wait_for('the server to initialize', function()
    return client.initialized == true
  end)
  step('offset_encoding', client.offset_encoding)
  local caps = client.server_capabilities or {}
  step('pull_diagnostics', caps.diagnosticProvider ~= nil)

  -- the planted syntax error: `mixed = Mul (act, gate` misses its `)`
  wait_for('the planted syntax error (GL101)', function()
    return has_code(buf, 'GL101')
  end)
  step('diagnostics_before', codes(buf))

  -- hover a value: K's handler opens a float with the value's type and shape
  local row, col = find(buf, '%] act = Relu')
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 2 })
  vim.lsp.buf.hover()
  wait_for('the hover window', function()
    return #floating_windows() > 0
  end)
  local float = floating_windows()[1]
  step('hover', vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false))
  vim.api.nvim_win_close(float, true)

  -- inlay hints (the server's `inlayHints` setting is on by default)
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  wait_for('inlay hints', function()
    return #vim.lsp.inlay_hint.get({ bufnr = buf }) > 0
  end)
  local labels = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local label = h.inlay_hint.label
    labels[#labels + 1] = type(label) == 'string' and label or label[1].value
  end
  step('inlay_hints', labels)

  -- the user turns the server's hints off at run time: Neovim sends the settings with didChangeConfiguration;
  -- the server sends no inlayHint/refresh, so the change shows at the next edit (the fix below)
  client.settings = vim.tbl_deep_extend('force', client.settings or {}, { graphlsp = { inlayHints = false } })
  client:notify('workspace/didChangeConfiguration', { settings = client.settings })

  -- fix the error in the buffer (not on disk): the diagnostic goes away, the other planted ones stay
  local fix_row, _, fix_end = find(buf, 'mixed = Mul %(act, gate')
  vim.api.nvim_buf_set_text(buf, fix_row, fix_end, fix_row, fix_end, { ')' })
  step('fixed_line', vim.api.nvim_buf_get_lines(buf, fix_row, fix_row + 1, false)[1])
  wait_for('the syntax error to go away', function()
    return not has_code(buf, 'GL101')
  end)
  step('diagnostics_after', codes(buf))
  wait_for('the inlay hints to go (inlayHints = false)', function()
    return #vim.lsp.inlay_hint.get({ bufnr = buf }) == 0
  end)
  step('inlay_hints_after', #vim.lsp.inlay_hint.get({ bufnr = buf }))
  step('disk_unchanged', vim.fn.readfile(vim.env.GRAPHLSP_FILE)[fix_row + 1] ~= result.fixed_line)

  vim.lsp.stop_client(client.id)
  wait_for('the server to stop', function()
    return client:is_stopped()
  end)
  step('done', true)
end

local ok, err = xpcall(session, debug.traceback)
if not ok then
  result.error = tostring(err)
end
local f = assert(io.open(vim.env.GRAPHLSP_RESULT, 'w'))
f:write(vim.json.encode(result))
f:close()
vim.cmd(ok and 'qall!' or 'cquit! 1')
