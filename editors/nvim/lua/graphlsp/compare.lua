-- "Compare with…" in Neovim: `:GraphlspCompare [HEAD|REV|PATH]` opens the model of the current buffer (a binary's
-- view, or a text model) beside another model or itself at a git revision (HEAD when no argument), in a diff split.
-- The other side is a scratch buffer (read-only, filetype onnxtxt) filled by the server: `graphlsp.renderRevision`
-- for a revision (git cat-file, run by the server), `graphlsp.renderView` for a binary model; a text model is read.
local M = {}

local RENDER = 'graphlsp.renderView'
local RENDER_REVISION = 'graphlsp.renderRevision'

local function notify(msg, level)
  vim.notify('graphlsp: ' .. msg, level or vim.log.levels.INFO)
end

---@return string? text, string? error
local function request(client, command, args)
  if not vim.wait(require('graphlsp.view').timeout_ms, function()
    return client.initialized == true or client:is_stopped()
  end, 20) then
    return nil, 'the server did not start'
  end
  local resp, err = client:request_sync('workspace/executeCommand', { command = command, arguments = { args } },
    require('graphlsp.view').timeout_ms)
  if not resp then
    return nil, err or 'no answer'
  end
  if resp.err then
    return nil, resp.err.message or vim.inspect(resp.err)
  end
  local result = resp.result or {}
  return result.text, result.error ~= vim.NIL and result.error or nil
end

--- The other side's text and its buffer name.
---@return string? text, string name, string? error
local function other_side(client, path, other)
  local file = vim.fs.normalize(vim.fn.fnamemodify(other, ':p'))
  if vim.uv.fs_stat(file) then
    if file:lower():match('%.onnx$') then
      local text, err = request(client, RENDER, { path = file })
      return text, file, err
    end
    return table.concat(vim.fn.readfile(file), '\n') .. '\n', file, nil
  end
  local text, err = request(client, RENDER_REVISION, { path = path, rev = other })
  return text, ('graphlsp://%s/%s'):format(other, vim.fs.basename(path)), err
end

--- Compares the buffer's model with `other` (a revision or a path; HEAD when empty).
---@param buf integer
---@param other string
function M.compare(buf, other)
  other = (other == nil or other == '') and 'HEAD' or other
  local path = vim.b[buf].graphlsp_view or vim.api.nvim_buf_get_name(buf)
  if path == '' or not (path:lower():match('%.onnx$') or path:lower():match('%.onnxte?xt$')) then
    notify('the buffer is no model (.onnx, .onnxtxt) to compare', vim.log.levels.ERROR)
    return
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'graphlsp' })[1]
  if not client then
    notify('the graphlsp server is not attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local text, name, err = other_side(client, path, other)
  if not text then
    notify('cannot compare with ' .. other .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  local left = vim.api.nvim_create_buf(false, true)
  vim.bo[left].bufhidden = 'wipe'
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  vim.api.nvim_buf_set_lines(left, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, left, name)
  vim.bo[left].modifiable, vim.bo[left].readonly, vim.bo[left].modified = false, true, false
  vim.bo[left].filetype = 'onnxtxt'
  local right_win = vim.api.nvim_get_current_win()
  vim.cmd('leftabove vsplit')
  vim.api.nvim_win_set_buf(0, left)
  vim.cmd('diffthis')
  vim.api.nvim_set_current_win(right_win)
  vim.cmd('diffthis')
  if err then
    notify(err, vim.log.levels.WARN)
  end
end

function M.setup()
  vim.api.nvim_create_user_command('GraphlspCompare', function(o)
    M.compare(vim.api.nvim_get_current_buf(), o.args)
  end, { nargs = '?', complete = 'file', desc = 'graphlsp: compare the model with HEAD (or a revision, or a model) in a diff split' })
end

return M
