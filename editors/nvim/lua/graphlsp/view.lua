-- Binary ONNX models (*.onnx) as read-only text views, rendered by the graphlsp server.
--
-- `:edit model.onnx` (BufReadCmd) asks the server for the model's view (workspace/executeCommand
-- `graphlsp.renderView`), fills a read-only buffer of filetype `onnxtxt` with it and attaches the graphlsp client:
-- the server recognises the .onnx URI and serves its own rendering, so every language feature works on the view.
-- `:w` never writes text over the binary (BufWriteCmd refuses); `:GraphlspSaveText` writes `model.onnxtxt` beside
-- it, `:GraphlspFold` writes `model.folded.onnx`. When the file changes on disk the server is told
-- (workspace/didChangeWatchedFiles, from a stat poll) and the buffer is filled again when the server says the view
-- changed (`graphlsp/viewChanged`).
local M = {}

--- How long :edit waits for the server to start and render the model (ms).
M.timeout_ms = 30000
--- How often an open view's file is looked at for changes (ms).
M.poll_ms = 1000

local RENDER = 'graphlsp.renderView'
local SAVE_AS_TEXT = 'graphlsp.saveViewAsText'
local FOLD = 'graphlsp.foldBinary'

local polls = {} ---@type table<integer, uv.uv_fs_poll_t>

local function notify(msg, level)
  vim.notify('graphlsp: ' .. msg, level or vim.log.levels.INFO)
end

--- The graphlsp client for a buffer: one attached already, else the one `vim.lsp.enable('graphlsp')` would use
--- for it (the same name and root, so it is reused when the buffer gets its filetype), started unattached.
---@param buf integer
---@return vim.lsp.Client?
local function client_for(buf)
  local attached = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  if attached then
    return attached
  end
  local config = vim.deepcopy(vim.lsp.config.graphlsp or require('graphlsp.config').default())
  config.name = 'graphlsp'
  if type(config.root_dir) ~= 'string' then
    config.root_dir = vim.fs.root(buf, config.root_markers or { '.git' })
  end
  local id = vim.lsp.start(config, { bufnr = buf, attach = false, silent = true })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- The buffer's lines as the text LSP sees (lines joined by \n, and a final \n: 'eol' is set).
---@param text string
---@return string[]
local function lines_of(text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- Puts the view's text in the buffer, as an unmodified, read-only buffer without undo history.
---@param buf integer
---@param text string
local function fill(buf, text)
  local lines = lines_of(text)
  if vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), lines) then
    return
  end
  local cursors = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    cursors[win] = vim.api.nvim_win_get_cursor(win)
  end
  local bo = vim.bo[buf]
  local undolevels = bo.undolevels
  bo.undolevels, bo.modifiable, bo.readonly = -1, true, false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  bo.undolevels, bo.modifiable, bo.readonly, bo.modified = undolevels, false, true, false
  for win, pos in pairs(cursors) do
    pcall(vim.api.nvim_win_set_cursor, win, { math.min(pos[1], #lines), pos[2] })
  end
end

---@param client vim.lsp.Client
---@param path string
---@param timeout integer
---@return string? text, string? error
local function render_sync(client, path, timeout)
  if not vim.wait(timeout, function()
    return client.initialized == true or client:is_stopped()
  end, 20) then
    return nil, 'the server did not start within ' .. timeout .. ' ms'
  end
  if client:is_stopped() then
    return nil, 'the server stopped'
  end
  local resp, err = client:request_sync('workspace/executeCommand', {
    command = RENDER,
    arguments = { { path = path } },
  }, timeout)
  if not resp then
    return nil, err or 'no answer'
  end
  if resp.err then
    return nil, resp.err.message or vim.inspect(resp.err)
  end
  return resp.result and resp.result.text or nil, resp.result == nil and 'empty answer' or nil
end

--- Tells the server, on each change of the file's size or time, that the model changed on disk.
---@param buf integer
---@param path string
local function watch(buf, path)
  if polls[buf] then
    return
  end
  local poll = assert(vim.uv.new_fs_poll())
  polls[buf] = poll
  poll:start(path, M.poll_ms, function()
    vim.schedule(function()
      if not vim.api.nvim_buf_is_valid(buf) then
        M.unwatch(buf)
        return
      end
      local uri = vim.uri_from_fname(path)
      for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })) do
        client:notify('workspace/didChangeWatchedFiles', { changes = { { uri = uri, type = 2 } } })
      end
    end)
  end)
end

---@param buf integer
function M.unwatch(buf)
  local poll = polls[buf]
  polls[buf] = nil
  if poll and not poll:is_closing() then
    poll:stop()
    poll:close()
  end
end

--- BufReadCmd for *.onnx: the buffer becomes the model's read-only view, with the graphlsp client attached.
---@param buf integer
---@param path string
function M.read(buf, path)
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  vim.b[buf].graphlsp_view = path
  local bo = vim.bo[buf]
  bo.swapfile = false
  bo.fileformat = 'unix'
  bo.eol, bo.fixeol = true, true
  bo.buftype = '' -- a file buffer: vim.lsp.enable attaches to those only
  local client = client_for(buf)
  local text, err
  if not client then
    err = 'the graphlsp server could not be started (see :checkhealth vim.lsp and editors/nvim/README.md)'
  else
    text, err = render_sync(client, path, M.timeout_ms)
  end
  if not text then
    fill(buf, '# graphlsp could not render ' .. path .. ': ' .. tostring(err) .. '\n')
    notify('cannot show ' .. vim.fn.fnamemodify(path, ':t') .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  fill(buf, text)
  bo.filetype = 'onnxtxt' -- vim.lsp.enable('graphlsp') attaches here (the same client: same name and root)
  if client and not vim.lsp.buf_is_attached(buf, client.id) then
    vim.lsp.buf_attach_client(buf, client.id)
  end
  watch(buf, path)
  M.buffer_commands(buf)
end

--- Fetches the view again (the server rendered a new one) and puts it in the buffer.
---@param buf integer
function M.refresh(buf)
  local path = vim.b[buf].graphlsp_view
  local client = path and vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  if not client then
    return
  end
  client:request('workspace/executeCommand', { command = RENDER, arguments = { { path = path } } }, function(err, result)
    if err or not result or not vim.api.nvim_buf_is_valid(buf) then
      if err then
        notify('cannot render ' .. path .. ': ' .. (err.message or ''), vim.log.levels.WARN)
      end
      return
    end
    fill(buf, result.text)
  end, buf)
end

--- `graphlsp/viewChanged` {uri, path}: the model changed on disk and the server rendered it again.
function M.on_view_changed(_, params)
  if type(params) ~= 'table' then
    return
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.b[buf].graphlsp_view == params.path then
      M.refresh(buf)
    end
  end
end

--- Runs one of the server's commands on the buffer's model (`bang`: overwrite an existing file).
---@param buf integer
---@param command string
---@param bang boolean
function M.run(buf, command, bang)
  local path = vim.b[buf].graphlsp_view
  local client = path and vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  if not client then
    notify('not a view of a binary model with the graphlsp server attached', vim.log.levels.ERROR)
    return
  end
  local args = { path = path, overwrite = bang or nil }
  -- the server reports what it wrote (window/showMessage), or asks before overwriting a file
  client:request('workspace/executeCommand', { command = command, arguments = { args } }, function(err)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end, buf)
end

---@param buf integer
function M.buffer_commands(buf)
  vim.api.nvim_buf_create_user_command(buf, 'GraphlspSaveText', function(o)
    M.run(buf, SAVE_AS_TEXT, o.bang)
  end, { bang = true, desc = 'graphlsp: save the model as ONNX text beside it (<name>.onnxtxt); ! overwrites' })
  vim.api.nvim_buf_create_user_command(buf, 'GraphlspFold', function(o)
    M.run(buf, FOLD, o.bang)
  end, { bang = true, desc = 'graphlsp: fold constants into <name>.folded.onnx beside the model; ! overwrites' })
end

--- BufWriteCmd (and FileWriteCmd, FileAppendCmd) for *.onnx: never writes text over a binary model.
---@param args table the autocmd's arguments
function M.refuse_write(args)
  local name = vim.fn.fnamemodify(args.match or args.file or '', ':t')
  notify(
    ('%s is a binary ONNX model: the text view is never written to it. :GraphlspSaveText writes it as %s'):format(
      name,
      (name:gsub('%.[oO][nN][nN][xX]$', '') .. '.onnxtxt')
    ),
    vim.log.levels.ERROR
  )
end

--- The autocmds for *.onnx (BufReadCmd, BufWriteCmd...) and the handler of `graphlsp/viewChanged`. Idempotent.
function M.setup()
  local group = vim.api.nvim_create_augroup('graphlsp.view', { clear = true })
  vim.api.nvim_create_autocmd('BufReadCmd', {
    group = group,
    pattern = { '*.onnx', '*.ONNX' },
    desc = 'graphlsp: a binary ONNX model as a read-only text view',
    callback = function(args)
      M.read(args.buf, args.match)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufWriteCmd', 'FileWriteCmd', 'FileAppendCmd' }, {
    group = group,
    pattern = { '*.onnx', '*.ONNX' },
    desc = 'graphlsp: never write text over a binary ONNX model',
    callback = M.refuse_write,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufUnload' }, {
    group = group,
    pattern = { '*.onnx', '*.ONNX' },
    callback = function(args)
      M.unwatch(args.buf)
    end,
  })
  vim.lsp.handlers['graphlsp/viewChanged'] = M.on_view_changed
end

return M
