-- Op libraries in Neovim against the real graphlsp server, run headless by test_nvim.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_oplib.lua'
-- with GRAPHLSP_CMD (the server command, a JSON array), GRAPHLSP_PROJECT (a folder with a pyproject.toml listing
-- ops/acme.onnxop in `op-libraries`, and model.onnxtxt using its op com.acme.MyOp) and GRAPHLSP_RESULT (where the
-- JSON result goes). Every wait has a timeout; the session always ends with :cquit.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local result, step = H.result()

local function session()
  H.start_server()
  local project = vim.env.GRAPHLSP_PROJECT

  -- the model: its op is declared by the project's library, so no GL316 and no error
  vim.cmd.edit(vim.fn.fnameescape(project .. '/model.onnxtxt'))
  local model = vim.api.nvim_get_current_buf()
  H.attached(model)
  H.wait_for("the model's diagnostics", function()
    return H.has_code(model, 'GL207') -- the planted unused value
  end)
  step('model_before', H.diagnostics(model))

  -- hover on the op: the declaration and its documentation
  local row, col = H.find(model, 'MyOp')
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 1 })
  step('hover', H.hover())

  -- gd (the ftplugin's map: LSP definition) opens the library at the op's declaration, in the model's window
  vim.cmd('normal gd')
  H.wait_for('the library to open', function()
    return vim.api.nvim_buf_get_name(0):match('acme%.onnxop$') ~= nil
  end)
  local lib = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  step('definition', { name = vim.api.nvim_buf_get_name(lib), line = cursor[1], col = cursor[2] })
  step('library_buffer', { filetype = vim.bo[lib].filetype, commentstring = vim.bo[lib].commentstring,
                           syntax = vim.b[lib].current_syntax })
  H.attached(lib)

  -- edit the shape contract in the buffer: B is now [N, K], so the model's w ([8, 16]) no longer fits
  local b_row, b_col, b_end = H.find(lib, 'T%[K, N%]')
  vim.api.nvim_buf_set_text(lib, b_row, b_col, b_row, b_end, { 'T[N, K]' })
  -- the model, out of sight, is pulled again on the server's workspace/diagnostic/refresh (lua/graphlsp/config.lua)
  H.wait_for('the model to be checked against the edited library (GL302)', function()
    return H.has_code(model, 'GL302')
  end)
  step('model_after', H.diagnostics(model))

  -- a syntax error in the library: located in its buffer
  local s_row, _, s_end = H.find(lib, 'T%[N, K%]')
  vim.api.nvim_buf_set_text(lib, s_row, s_end - 1, s_row, s_end, { '' })
  H.wait_for('the syntax error in the library (GL601)', function()
    return H.has_code(lib, 'GL601')
  end)
  step('library_diagnostics', H.diagnostics(lib))
  step('disk_unchanged', vim.fn.readfile(project .. '/ops/acme.onnxop')[s_row + 1]:find('T%[K, N%]') ~= nil)

  H.stop_servers()
  step('done', true)
end

H.run(result, session)
