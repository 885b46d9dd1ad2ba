-- A Neovim session against the real graphlsp server, run headless by test_nvim.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_session.lua'
-- with GRAPHLSP_CMD (the server command, a JSON array), GRAPHLSP_FILE (a copy of examples/broken.onnxtxt) and
-- GRAPHLSP_RESULT (where the JSON result goes). Every wait has a timeout; the session always ends with :cquit.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result, step = H.result()

local function session()
  step('nvim_version', tostring(vim.version()))
  -- the documented setup (editors/nvim/README.md), with the server command of the test run
  H.start_server()

  vim.cmd.edit(vim.fn.fnameescape(vim.env.GRAPHLSP_FILE))
  local buf = vim.api.nvim_get_current_buf()
  step('filetype', vim.bo[buf].filetype)
  step('commentstring', vim.bo[buf].commentstring)

  local client = H.attached(buf)
  step('offset_encoding', client.offset_encoding)
  local caps = client.server_capabilities or {}
  step('pull_diagnostics', caps.diagnosticProvider ~= nil)

  -- the planted syntax error: `mixed = Mul (act, gate` misses its `)`
  H.wait_for('the planted syntax error (GL101)', function()
    return H.has_code(buf, 'GL101')
  end)
  step('diagnostics_before', H.diagnostics(buf))

  -- hover a value: K's handler opens a float with the value's type and shape
  local row, col = H.find(buf, '%] act = Relu')
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 2 })
  step('hover', H.hover())

  -- inlay hints (the server's `inlayHints` setting is on by default)
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  H.wait_for('inlay hints', function()
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
  local fix_row, _, fix_end = H.find(buf, 'mixed = Mul %(act, gate')
  vim.api.nvim_buf_set_text(buf, fix_row, fix_end, fix_row, fix_end, { ')' })
  step('fixed_line', vim.api.nvim_buf_get_lines(buf, fix_row, fix_row + 1, false)[1])
  H.wait_for('the syntax error to go away', function()
    return not H.has_code(buf, 'GL101')
  end)
  step('diagnostics_after', H.diagnostics(buf))
  H.wait_for('the inlay hints to go (inlayHints = false)', function()
    return #vim.lsp.inlay_hint.get({ bufnr = buf }) == 0
  end)
  step('inlay_hints_after', #vim.lsp.inlay_hint.get({ bufnr = buf }))
  step('disk_unchanged', vim.fn.readfile(vim.env.GRAPHLSP_FILE)[fix_row + 1] ~= result.fixed_line)

  H.stop_servers()
  step('done', true)
end

H.run(result, session)
