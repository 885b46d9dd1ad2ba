-- Op libraries in Neovim against the real graphlsp server, run headless by test_nvim.py:
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_oplib.lua'
-- with GRAPHLSP_CMD (the server command, a JSON array), GRAPHLSP_PROJECT (a folder with a pyproject.toml listing
-- ops/acme.onnxop in `op-libraries`, and model.onnxtxt using its op com.acme.MyOp) and GRAPHLSP_RESULT (where the
-- JSON result goes). Every wait has a timeout; the session always ends with :cquit.
local TIMEOUT = tonumber(vim.env.GRAPHLSP_TIMEOUT_MS or '20000')
local result = { steps = {} }

local function step(name, value)
  result.steps[#result.steps + 1] = name
  if value ~= nil then
    result[name] = value
  end
end

local function wait_for(what, predicate)
  if not vim.wait(TIMEOUT, predicate, 50) then
    error('timed out after ' .. TIMEOUT .. ' ms waiting for ' .. what, 0)
  end
end

local function diagnostics(bufnr)
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

local function attached(buf)
  wait_for('the graphlsp client to attach to ' .. vim.api.nvim_buf_get_name(buf), function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' }) > 0
  end)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  wait_for('the server to initialize', function()
    return client.initialized == true
  end)
  return client
end

local function session()
  vim.lsp.config('graphlsp', { cmd = vim.json.decode(vim.env.GRAPHLSP_CMD) })
  vim.lsp.enable('graphlsp')
  local project = vim.env.GRAPHLSP_PROJECT

  -- the model: its op is declared by the project's library, so no GL316 and no error
  vim.cmd.edit(vim.fn.fnameescape(project .. '/model.onnxtxt'))
  local model = vim.api.nvim_get_current_buf()
  local client = attached(model)
  wait_for("the model's diagnostics", function()
    return has_code(model, 'GL207') -- the planted unused value
  end)
  step('model_before', diagnostics(model))

  -- hover on the op: the declaration and its documentation
  local row, col = find(model, 'MyOp')
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 1 })
  vim.lsp.buf.hover()
  wait_for('the hover window', function()
    return #floating_windows() > 0
  end)
  local float = floating_windows()[1]
  step('hover', vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false))
  vim.api.nvim_win_close(float, true)

  -- gd (the ftplugin's map: LSP definition) opens the library at the op's declaration, in the model's window
  vim.cmd('normal gd')
  wait_for('the library to open', function()
    return vim.api.nvim_buf_get_name(0):match('acme%.onnxop$') ~= nil
  end)
  local lib = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  step('definition', { name = vim.api.nvim_buf_get_name(lib), line = cursor[1], col = cursor[2] })
  step('library_buffer', { filetype = vim.bo[lib].filetype, commentstring = vim.bo[lib].commentstring,
                           syntax = vim.b[lib].current_syntax })
  attached(lib)

  -- edit the shape contract in the buffer: B is now [N, K], so the model's w ([8, 16]) no longer fits
  local b_row, b_col, b_end = find(lib, 'T%[K, N%]')
  vim.api.nvim_buf_set_text(lib, b_row, b_col, b_row, b_end, { 'T[N, K]' })
  -- the model, out of sight, is pulled again on the server's workspace/diagnostic/refresh (lua/graphlsp/config.lua)
  wait_for('the model to be checked against the edited library (GL302)', function()
    return has_code(model, 'GL302')
  end)
  step('model_after', diagnostics(model))

  -- a syntax error in the library: located in its buffer
  local s_row, _, s_end = find(lib, 'T%[N, K%]')
  vim.api.nvim_buf_set_text(lib, s_row, s_end - 1, s_row, s_end, { '' })
  wait_for('the syntax error in the library (GL601)', function()
    return has_code(lib, 'GL601')
  end)
  step('library_diagnostics', diagnostics(lib))
  step('disk_unchanged', vim.fn.readfile(project .. '/ops/acme.onnxop')[s_row + 1]:find('T%[K, N%]') ~= nil)

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
