-- `:GraphlspGraph [file]`: the buffer's model as a graph page, written and opened in the browser.
--
-- The server answers `graphlsp/graph` (format `html`) with the whole self-contained page for the buffer's text as
-- it is (unsaved edits included; a binary model's view shows the binary's graph): the page `graphlsp graph` writes.
-- It is written to [file], else to `<stdpath('cache')>/graphlsp/<name>.graph.html`, and opened with vim.ui.open.
local M = {}

local REQUEST = 'graphlsp/graph'

local function notify(msg, level)
  vim.notify('graphlsp: ' .. msg, level or vim.log.levels.INFO)
end

--- Where the page of a buffer goes when no file is named.
---@param buf integer
---@return string
function M.default_path(buf)
  local name = vim.fs.basename(vim.api.nvim_buf_get_name(buf))
  if name == '' then
    name = 'untitled'
  end
  local dir = vim.fs.joinpath(vim.fn.stdpath('cache'), 'graphlsp')
  vim.fn.mkdir(dir, 'p')
  return vim.fs.joinpath(dir, (name:gsub('%.[^.]*$', '')) .. '.graph.html')
end

--- Writes the buffer's graph page and opens it; `on_done(path|nil, err|nil)` is called when it is written.
---@param buf integer
---@param out? string
---@param on_done? fun(path: string?, err: string?)
function M.show(buf, out, on_done)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local done = function(path, err)
    if err then
      notify(err, vim.log.levels.ERROR)
    end
    if on_done then
      on_done(path, err)
    end
  end
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  if not client then
    done(nil, 'no graphlsp server is attached to this buffer')
    return
  end
  local path = out and vim.fn.fnamemodify(out, ':p') or M.default_path(buf)
  client:request(REQUEST, { uri = vim.uri_from_bufnr(buf), format = 'html' }, function(err, result)
    if err or type(result) ~= 'table' or type(result.html) ~= 'string' then
      done(nil, 'the graph failed: ' .. (err and (err.message or vim.inspect(err)) or 'no page in the answer'))
      return
    end
    local f, open_err = io.open(path, 'wb')
    if not f then
      done(nil, ('cannot write %s: %s'):format(path, open_err))
      return
    end
    f:write(result.html)
    f:close()
    notify('wrote ' .. path)
    local _, ui_err = vim.ui.open(path)
    if ui_err then
      notify(('wrote %s, but cannot open it: %s'):format(path, ui_err), vim.log.levels.WARN)
    end
    done(path, nil)
  end, buf)
end

--- The buffer-local command (ftplugin/onnxtxt.lua: text models and binary models' views).
---@param buf integer
function M.buffer_command(buf)
  vim.api.nvim_buf_create_user_command(buf, 'GraphlspGraph', function(o)
    M.show(buf, o.args ~= '' and o.args or nil)
  end, {
    nargs = '?',
    complete = 'file',
    desc = 'graphlsp: write the model graph page (to [file], else the cache folder) and open it',
  })
end

return M
