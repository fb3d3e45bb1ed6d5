-- session_sidecar.nvim: browse and act on coding-agent sessions through a
-- session-sidecar process. See clients/nvim/README.md.
local rpc = require("session_sidecar.rpc")
local render = require("session_sidecar.render")

local M = {}

M.config = {
  -- The sidecar to run: a list (program and leading arguments), e.g.
  -- { "session-sidecar" }, { "uvx", "session-sidecar" }, { "/path/to/session-sidecar-linux-x86_64" }.
  cmd = { vim.env.SESSION_SIDECAR_BIN ~= nil and vim.env.SESSION_SIDECAR_BIN ~= "" and vim.env.SESSION_SIDECAR_BIN or "session-sidecar" },
  root = nil, -- the sessions root (initialize's sessionRoot); nil: the sidecar's own
  env = nil, -- extra environment for the sidecar
  limit = 200, -- sessions listed
  timeout_ms = 30000,
}

-- What each buffer of ours shows: { kind = "list"|"conversation", targets = {lnum -> ...}, ... }
local buffers = {}

function M.setup(options)
  M.config = vim.tbl_extend("force", M.config, options or {})
  return M
end

local function call(method, params)
  return rpc.request(M.config, method, params)
end

local function scratch_buffer(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

local function notify(message, level)
  vim.notify(message, level or vim.log.levels.INFO)
end

-- Runs fn, reporting a failure as an error message instead of a Lua traceback.
local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      notify(tostring(err), vim.log.levels.ERROR)
    end
  end
end

-- :Sessions - the sessions of the current working directory.
function M.list()
  local cwd = vim.fn.getcwd()
  local result = call("session/list", { cwd = cwd, limit = M.config.limit })
  local lines, targets = render.list(result.sessions or {}, cwd)
  local buf = scratch_buffer("sessions://" .. cwd, "sessionlist")
  set_lines(buf, lines)
  buffers[buf] = { kind = "list", cwd = cwd, targets = targets }
  vim.api.nvim_set_current_buf(buf)
  vim.keymap.set("n", "<CR>", guarded(function() M.open_under_cursor() end), { buffer = buf, desc = "open the session" })
  vim.keymap.set("n", "R", guarded(function() M.list() end), { buffer = buf, desc = "list again" })
  if #lines > 1 and targets[2] then
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
  end
  return buf
end

-- Reads a session without taking its lock (an agent may be writing it).
local function read_session(session_id)
  local opened = call("session/open", { sessionId = session_id, readOnly = true })
  local ok, err = pcall(function()
    local tree = call("session/getTree", { sessionId = session_id })
    local path_ids, by_id = {}, {}
    for _, node in ipairs(tree.nodes or {}) do
      by_id[node.id] = node
    end
    local id = tree.leafId
    while id and by_id[id] do
      table.insert(path_ids, 1, id)
      id = by_id[id].parentId
    end
    local entries = {}
    if #path_ids > 0 then
      for _, entry in ipairs(call("session/getEntries", { sessionId = session_id, ids = path_ids }).entries or {}) do
        entries[entry.id] = entry
      end
    end
    opened.tree, opened.entries, opened.path_ids = tree, entries, path_ids
  end)
  call("session/close", { sessionId = session_id })
  if not ok then
    error(err, 0)
  end
  return opened
end

-- Opens a session's conversation (the path to its leaf) in a buffer.
function M.open(session_id)
  local session = read_session(session_id)
  local title = session.header.title or session_id
  for _, id in ipairs(session.path_ids) do -- the last name on the path, as pi shows it
    local entry = session.entries[id]
    if entry and entry.type == "session_info" and entry.name then
      title = entry.name
    end
  end
  local lines, targets, folds = render.conversation(session.header, session.tree.nodes or {}, session.tree.leafId, session.entries, title)
  local buf = scratch_buffer("session://" .. session_id, "sessionconversation")
  set_lines(buf, lines)
  buffers[buf] = { kind = "conversation", sessionId = session_id, path = session.path, targets = targets }
  vim.api.nvim_set_current_buf(buf)
  -- Tool calls, tool results, thinking and summaries folded; zo opens one.
  vim.wo.foldmethod = "manual"
  vim.wo.foldenable = true
  vim.cmd("silent! normal! zE")
  for _, range in ipairs(folds) do
    vim.cmd(string.format("%d,%dfold", range[1], range[2]))
  end
  vim.keymap.set("n", "R", guarded(function() M.open(session_id) end), { buffer = buf, desc = "read the session again" })
  return buf
end

-- The session, and in a conversation the entry, under the cursor.
local function under_cursor()
  local buf = vim.api.nvim_get_current_buf()
  local state = buffers[buf]
  if not state then
    error("session-sidecar: not a :Sessions list or a session's buffer", 0)
  end
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  if state.kind == "list" then
    local target = state.targets[lnum]
    if not target then
      error("session-sidecar: no session on this line", 0)
    end
    return state, target.sessionId, nil
  end
  return state, state.sessionId, state.targets[lnum]
end

function M.open_under_cursor()
  local _, session_id = under_cursor()
  return M.open(session_id)
end

-- Runs fn(sessionId) on the session opened for writing, then closes it.
local function with_session_open(session_id, fn)
  call("session/open", { sessionId = session_id })
  local ok, result = pcall(fn, session_id)
  call("session/close", { sessionId = session_id })
  if not ok then
    error(result, 0)
  end
  return result
end

local function refresh(state)
  local view = vim.fn.winsaveview()
  if state.kind == "list" then
    M.list()
  else
    M.open(state.sessionId)
  end
  vim.fn.winrestview(view)
end

-- :SessionFork - a new session holding the path to the entry under the cursor
-- (in the list: to the session's leaf); opens it.
function M.fork()
  local _, session_id, entry_id = under_cursor()
  local forked = with_session_open(session_id, function(id)
    return call("session/fork", { sessionId = id, entryId = entry_id })
  end)
  notify("forked " .. session_id .. (entry_id and (" at " .. entry_id) or "") .. " into " .. forked.sessionId)
  M.open(forked.sessionId)
  return forked
end

-- :SessionLabel [TEXT] - labels the entry under the cursor (no text: clears its label).
function M.label(text)
  local state, session_id, entry_id = under_cursor()
  if not entry_id then
    error("session-sidecar: :SessionLabel labels an entry: put the cursor on one in a session's buffer", 0)
  end
  local label = (text and text ~= "") and text or vim.NIL
  with_session_open(session_id, function(id)
    return call("session/setLabel", { sessionId = id, entryId = entry_id, label = label })
  end)
  refresh(state)
end

-- :SessionName NAME - names the session under the cursor (or of this buffer).
function M.name(text)
  if not text or text == "" then
    error("session-sidecar: :SessionName needs a name", 0)
  end
  local state, session_id = under_cursor()
  with_session_open(session_id, function(id)
    return call("session/setName", { sessionId = id, name = text })
  end)
  refresh(state)
end

M.guarded = guarded
M.stop = rpc.stop

return M
