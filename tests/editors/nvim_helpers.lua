-- What the headless Neovim sessions of tests/editors share (nvim_session.lua, nvim_oplib.lua, nvim_graph.lua,
-- nvim_binary.lua, nvim_config.lua): starting the server, waiting with a timeout, reading diagnostics, hover
-- windows and buffers, and ending the session with its JSON result. Each script loads it beside itself:
--   local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/nvim_helpers.lua')
local H = {}

H.TIMEOUT = tonumber(vim.env.GRAPHLSP_TIMEOUT_MS or '20000')

--- The session's result (`fields` and a list of the steps done) and the function that records a step.
function H.result(fields)
  local result = fields or {}
  result.steps = {}
  local function step(name, value)
    result.steps[#result.steps + 1] = name
    if value ~= nil then
      result[name] = value
    end
  end
  return result, step
end

--- Waits until `predicate` holds; an error naming `what` after GRAPHLSP_TIMEOUT_MS.
function H.wait_for(what, predicate)
  if not vim.wait(H.TIMEOUT, predicate, 20) then
    error('timed out after ' .. H.TIMEOUT .. ' ms waiting for ' .. what, 0)
  end
end

--- The documented setup (editors/nvim/README.md), with the server command of the test run (GRAPHLSP_CMD).
function H.start_server()
  vim.lsp.config('graphlsp', { cmd = vim.json.decode(vim.env.GRAPHLSP_CMD) })
  vim.lsp.enable('graphlsp')
end

--- The graphlsp client of the buffer, once it is attached and initialized.
function H.attached(buf)
  H.wait_for('the graphlsp client to attach to ' .. vim.api.nvim_buf_get_name(buf), function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' }) > 0
  end)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  H.wait_for('the server to initialize', function()
    return client.initialized == true
  end)
  return client
end

--- Stops every graphlsp client and waits until each has stopped.
function H.stop_servers()
  for _, client in ipairs(vim.lsp.get_clients({ name = 'graphlsp' })) do
    vim.lsp.stop_client(client.id)
    H.wait_for('the server to stop', function()
      return client:is_stopped()
    end)
  end
end

--- Each message shown to the user (vim.notify: the server's window/showMessage, the plugin's errors) is also
--- appended to `messages`.
function H.record_messages(messages)
  local notify = vim.notify
  vim.notify = function(msg, level, opts)
    messages[#messages + 1] = msg
    return notify(msg, level, opts)
  end
end

--- The buffer's diagnostics ({code, lnum, col, message}), by line.
function H.diagnostics(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out[#out + 1] = { code = d.code, lnum = d.lnum, col = d.col, message = d.message }
  end
  table.sort(out, function(a, b)
    return a.lnum < b.lnum
  end)
  return out
end

--- The buffer's diagnostic codes, sorted.
function H.codes(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out[#out + 1] = d.code
  end
  table.sort(out)
  return out
end

function H.has_code(buf, code)
  return vim.tbl_contains(H.codes(buf), code)
end

--- The first place of `pattern` in the buffer: its line (0-based), start column (0-based) and end column.
function H.find(buf, pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
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

--- K at the cursor: the lines of the hover window (closed again). `what` names it in a timeout.
function H.hover(what)
  vim.lsp.buf.hover()
  H.wait_for(what or 'the hover window', function()
    return #floating_windows() > 0
  end)
  local float = floating_windows()[1]
  local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
  vim.api.nvim_win_close(float, true)
  return lines
end

--- Runs `session`, writes `result` (with `error` when it failed) to GRAPHLSP_RESULT and quits: 0 when it ran
--- through, 1 when not. The session always ends.
function H.run(result, session)
  local ok, err = xpcall(session, debug.traceback)
  if not ok then
    result.error = tostring(err)
  end
  local f = assert(io.open(vim.env.GRAPHLSP_RESULT, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd(ok and 'qall!' or 'cquit! 1')
end

return H
