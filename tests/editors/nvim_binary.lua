-- Binary models in a headless Neovim against the real graphlsp server, run by test_nvim_binary.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_binary.lua'
-- GRAPHLSP_CMD: the server command (JSON array); GRAPHLSP_SPEC: a JSON file with the models and what to do on each;
-- GRAPHLSP_RESULT: where the JSON result goes. Every wait has a timeout; the session always ends.
local TIMEOUT = tonumber(vim.env.GRAPHLSP_TIMEOUT_MS or '20000')
local result = { steps = {}, models = {} }
local spec = vim.json.decode(table.concat(vim.fn.readfile(vim.env.GRAPHLSP_SPEC), '\n'))

local function wait_for(what, predicate)
  if not vim.wait(TIMEOUT, predicate, 20) then
    error('timed out after ' .. TIMEOUT .. ' ms waiting for ' .. what, 0)
  end
end

-- what the user is told (BufWriteCmd's refusal, the server's window/showMessage)
local messages = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  messages[#messages + 1] = msg
  return notify(msg, level, opts)
end

-- every pulled diagnostic report, per buffer: a model without findings gets an empty one
local reports = {}
local on_diagnostic = vim.lsp.handlers['textDocument/diagnostic']
vim.lsp.handlers['textDocument/diagnostic'] = function(err, res, ctx, config)
  if res and ctx.bufnr then
    reports[ctx.bufnr] = (reports[ctx.bufnr] or 0) + 1
  end
  return on_diagnostic(err, res, ctx, config)
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

local function buffer_sha(buf)
  return vim.fn.sha256(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n')
end

local function codes(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out[#out + 1] = d.code
  end
  table.sort(out)
  return out
end

local function one(m)
  local r = { name = vim.fs.basename(m.path) }
  result.models[#result.models + 1] = r
  vim.cmd.edit(vim.fn.fnameescape(m.path))
  local buf = vim.api.nvim_get_current_buf()
  r.filetype, r.modifiable, r.readonly = vim.bo[buf].filetype, vim.bo[buf].modifiable, vim.bo[buf].readonly
  r.sha256 = buffer_sha(buf)
  wait_for('the graphlsp client on ' .. r.name, function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' }) > 0
  end)
  wait_for('the diagnostics of ' .. r.name, function()
    return (reports[buf] or 0) > 0 and #vim.diagnostic.get(buf) == #m.codes
  end)
  r.codes = codes(buf)

  -- K on a node output: the hover window shows the value's type and shape
  vim.api.nvim_win_set_cursor(0, { m.hover[1] + 1, m.hover[2] })
  vim.lsp.buf.hover()
  wait_for('the hover window on ' .. r.name, function()
    return #floating_windows() > 0
  end)
  local float = floating_windows()[1]
  r.hover = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
  vim.api.nvim_win_close(float, true)

  -- gd on a node input: the cursor goes to the line of its producer
  vim.api.nvim_win_set_cursor(0, { m.use[1] + 1, m.use[2] })
  vim.cmd('normal gd')
  wait_for('gd to jump on ' .. r.name, function()
    return vim.api.nvim_win_get_cursor(0)[1] - 1 == m.use[4]
  end)
  r.gd_line = vim.api.nvim_win_get_cursor(0)[1] - 1
  r.gd_word = vim.fn.expand('<cWORD>')

  -- the view is never written over the binary, and cannot be edited
  local before = #messages
  local ok, why = pcall(vim.cmd, 'write')
  r.write = { ok = ok, error = not ok and tostring(why) or nil }
  r.write_bang_ok = pcall(vim.cmd, 'write!')
  r.write_messages = vim.list_slice(messages, before + 1)
  r.edit_ok = pcall(vim.api.nvim_buf_set_lines, buf, 0, 0, false, { 'x' })
  r.sha256_after = buffer_sha(buf)
  vim.cmd('bwipeout!')
end

local function session()
  result.nvim_version = tostring(vim.version())
  vim.lsp.config('graphlsp', { cmd = vim.json.decode(vim.env.GRAPHLSP_CMD) })
  vim.lsp.enable('graphlsp')
  for _, m in ipairs(spec.models) do
    one(m)
  end
  result.steps[#result.steps + 1] = 'models'

  -- the file changes on disk: the buffer follows (a poll tells the server, the server tells the buffer)
  local c = spec.change
  vim.cmd.edit(vim.fn.fnameescape(c.path))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('the diagnostics before the change', function()
    return (reports[buf] or 0) > 0 and #vim.diagnostic.get(buf) == #c.codes_before
  end)
  result.change = { sha256_before = buffer_sha(buf), codes_before = codes(buf) }
  assert(vim.uv.fs_copyfile(c.replacement, c.path))
  wait_for('the buffer to show the new model', function()
    return buffer_sha(buf) == c.sha256_after
  end)
  wait_for('the diagnostics of the new model', function()
    return #vim.diagnostic.get(buf) == #c.codes_after and vim.deep_equal(codes(buf), c.codes_after)
  end)
  result.change.sha256_after = buffer_sha(buf)
  result.change.codes_after = codes(buf)
  result.change.modified = vim.bo[buf].modified
  result.messages = messages
  result.steps[#result.steps + 1] = 'change'

  for _, client in ipairs(vim.lsp.get_clients({ name = 'graphlsp' })) do
    vim.lsp.stop_client(client.id)
    wait_for('the server to stop', function()
      return client:is_stopped()
    end)
  end
  result.done = true
end

local ok, err = xpcall(session, debug.traceback)
if not ok then
  result.error = tostring(err)
end
local f = assert(io.open(vim.env.GRAPHLSP_RESULT, 'w'))
f:write(vim.json.encode(result))
f:close()
vim.cmd(ok and 'qall!' or 'cquit! 1')
