-- Binary models in a headless Neovim against the real graphlsp server, run by test_nvim_binary.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_binary.lua'
-- GRAPHLSP_CMD: the server command (JSON array); GRAPHLSP_SPEC: a JSON file with the models and what to do on each;
-- GRAPHLSP_RESULT: where the JSON result goes. Every wait has a timeout; the session always ends.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result, step = H.result({ models = {} })
local spec = vim.json.decode(table.concat(vim.fn.readfile(vim.env.GRAPHLSP_SPEC), '\n'))

-- what the user is told (BufWriteCmd's refusal, the server's window/showMessage)
local messages = {}
H.record_messages(messages)

-- every pulled diagnostic report, per buffer: a model without findings gets an empty one
local reports = {}
local on_diagnostic = vim.lsp.handlers['textDocument/diagnostic']
vim.lsp.handlers['textDocument/diagnostic'] = function(err, res, ctx, config)
  if res and ctx.bufnr then
    reports[ctx.bufnr] = (reports[ctx.bufnr] or 0) + 1
  end
  return on_diagnostic(err, res, ctx, config)
end

local function buffer_sha(buf)
  return vim.fn.sha256(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n')
end

local function one(m)
  local r = { name = vim.fs.basename(m.path) }
  result.models[#result.models + 1] = r
  vim.cmd.edit(vim.fn.fnameescape(m.path))
  local buf = vim.api.nvim_get_current_buf()
  r.filetype, r.modifiable, r.readonly = vim.bo[buf].filetype, vim.bo[buf].modifiable, vim.bo[buf].readonly
  r.sha256 = buffer_sha(buf)
  H.attached(buf)
  H.wait_for('the diagnostics of ' .. r.name, function()
    return (reports[buf] or 0) > 0 and #vim.diagnostic.get(buf) == #m.codes
  end)
  r.codes = H.codes(buf)

  -- K on a node output: the hover window shows the value's type and shape
  vim.api.nvim_win_set_cursor(0, { m.hover[1] + 1, m.hover[2] })
  r.hover = H.hover('the hover window on ' .. r.name)

  -- gd on a node input: the cursor goes to the line of its producer
  vim.api.nvim_win_set_cursor(0, { m.use[1] + 1, m.use[2] })
  vim.cmd('normal gd')
  H.wait_for('gd to jump on ' .. r.name, function()
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
  H.start_server()
  for _, m in ipairs(spec.models) do
    one(m)
  end
  step('models')

  -- the file changes on disk: the buffer follows (a poll tells the server, the server tells the buffer)
  local c = spec.change
  vim.cmd.edit(vim.fn.fnameescape(c.path))
  local buf = vim.api.nvim_get_current_buf()
  H.wait_for('the diagnostics before the change', function()
    return (reports[buf] or 0) > 0 and #vim.diagnostic.get(buf) == #c.codes_before
  end)
  result.change = { sha256_before = buffer_sha(buf), codes_before = H.codes(buf) }
  assert(vim.uv.fs_copyfile(c.replacement, c.path))
  H.wait_for('the buffer to show the new model', function()
    return buffer_sha(buf) == c.sha256_after
  end)
  H.wait_for('the diagnostics of the new model', function()
    return #vim.diagnostic.get(buf) == #c.codes_after and vim.deep_equal(H.codes(buf), c.codes_after)
  end)
  result.change.sha256_after = buffer_sha(buf)
  result.change.codes_after = H.codes(buf)
  result.change.modified = vim.bo[buf].modified
  result.messages = messages
  step('change')

  H.stop_servers()
  result.done = true
end

H.run(result, session)
