-- The plugin in a real headless Neovim against a real sidecar: :Sessions, opening
-- a session, :SessionLabel, :SessionName, :SessionFork, and a sidecar of another
-- protocol major. Checked through the buffers' lines and the session files.
-- Run by clients/nvim/test.sh: SESSION_SIDECAR_BIN is the sidecar, NVIM_TEST_DIR a scratch folder.
local sidecar_bin = assert(vim.env.SESSION_SIDECAR_BIN, "SESSION_SIDECAR_BIN")
local scratch = assert(vim.env.NVIM_TEST_DIR, "NVIM_TEST_DIR")
local root = scratch .. "/sessions"
local project = scratch .. "/project"
vim.fn.mkdir(project, "p")

local failures, checks = {}, 0
local function check(ok, what)
  checks = checks + 1
  if not ok then
    table.insert(failures, what)
    io.stderr:write("FAIL: " .. what .. "\n")
  end
end

local messages = {}
vim.notify = function(message, level)
  table.insert(messages, { message = message, level = level or vim.log.levels.INFO })
end
local function errors_since(n)
  local found = {}
  for i = n + 1, #messages do
    if messages[i].level >= vim.log.levels.ERROR then
      table.insert(found, messages[i].message)
    end
  end
  return found
end

local function lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end
local function find_line(pattern, from)
  for i, line in ipairs(lines()) do
    if i >= (from or 1) and line:find(pattern, 1, true) then
      return i
    end
  end
end
local function read_entries(path)
  local entries = {}
  for _, line in ipairs(vim.fn.readfile(path)) do
    if line ~= "" then
      table.insert(entries, vim.json.decode(line))
    end
  end
  return entries
end
local function run(command)
  local before = #messages
  vim.cmd(command)
  local errs = errors_since(before)
  check(#errs == 0, command .. " reported no error (got: " .. table.concat(errs, " | ") .. ")")
end

local parser_body -- the read's output in the fixtures (set there)

-- The fixtures, written through a sidecar of the test's own (not the plugin's code).
local function fixtures()
  local rpc = vim.fn.has("nvim-0.10") == 1 and vim.lsp.rpc.start({ sidecar_bin }, {}) or vim.lsp.rpc.start(sidecar_bin, {}, {})
  local function call(method, params)
    local done, err, result = false, nil, nil
    rpc.request(method, params, function(e, r) done, err, result = true, e, r end)
    assert(vim.wait(30000, function() return done end, 5), method .. ": no answer")
    assert(not err, method .. ": " .. vim.inspect(err))
    return result
  end
  call("initialize", { protocolVersion = "1.0", sessionRoot = root, settings = { providers = { default = "offline" } } })
  rpc.notify("initialized", vim.empty_dict())
  local function msg(role, text, extra)
    local m = { role = role, content = { { type = "text", text = text } } }
    if role == "assistant" then m.stopReason = "stop" end
    return { type = "message", message = vim.tbl_extend("force", m, extra or {}) }
  end
  local function append(id, entries)
    return call("session/append", { sessionId = id, entries = entries }).entries
  end
  -- The read's output is long enough that the compaction below shrinks the context (the sidecar
  -- refuses one whose summary, with what it must carry over, is not smaller than what it replaces).
  parser_body = "def parse(): ..." .. string.rep("\n    pass  # keep the parser simple", 120)
  local a = call("session/create", { cwd = project, name = "parser work" })
  local first = append(a.sessionId, {
    msg("user", "fix the parser"),
    { type = "message", message = { role = "assistant", stopReason = "toolUse",
      content = { { type = "text", text = "reading it" }, { type = "toolCall", id = "call-1", name = "read", arguments = { path = "parser.py" } } } } },
    { type = "message", message = { role = "toolResult", toolCallId = "call-1", toolName = "read", isError = false,
      content = { { type = "text", text = parser_body } } } },
    msg("assistant", "the parser is fixed"),
  })
  local a2 = first[4].id
  call("session/branch", { sessionId = a.sessionId, entryId = a2 })
  append(a.sessionId, { msg("user", "try another way"), msg("assistant", "another way") })
  call("session/branch", { sessionId = a.sessionId, entryId = a2 })
  local second = append(a.sessionId, { msg("user", "now the lexer"), msg("assistant", "lexer fixed too") })
  call("session/compact", { sessionId = a.sessionId, provider = "offline", keepRecentTokens = 1 })
  append(a.sessionId, { msg("user", "and the tests?"), msg("assistant", "tests pass") })
  local b = call("session/create", { cwd = project })
  append(b.sessionId, { msg("user", "second session here"), msg("assistant", "hello") })
  local c = call("session/create", { cwd = scratch .. "/elsewhere" })
  append(c.sessionId, { msg("user", "not in this project"), msg("assistant", "right") })
  call("shutdown", nil)
  rpc.notify("exit", nil)
  return {
    a = call and a, b = b, c = c,
    lexer_answer = second[2].id, branch_at = a2,
  }
end

local ok, err = pcall(function()
  local f = fixtures()
  require("session_sidecar").setup({ cmd = { sidecar_bin }, root = root })
  vim.cmd("cd " .. vim.fn.fnameescape(project))

  -- :Sessions lists this cwd's sessions: name, first message, age, size.
  run("Sessions")
  check(vim.api.nvim_buf_get_name(0):find("sessions://", 1, true) ~= nil, "the list buffer is named sessions://<cwd>")
  local buf_lines = lines()
  check(#buf_lines == 3, "two sessions listed under the header (got " .. #buf_lines .. " lines: " .. vim.inspect(buf_lines) .. ")")
  local a_line = find_line("parser work")
  local b_line = find_line("second session here")
  check(a_line ~= nil and buf_lines[a_line]:find("fix the parser", 1, true) ~= nil, "session A: its name and first message")
  check(b_line ~= nil and buf_lines[b_line]:find("-", 1, true) ~= nil, "session B: no name, its first message")
  check(find_line("not in this project") == nil, "a session of another cwd is not listed")
  local a_size = vim.loop.fs_stat(f.a.path).size
  check(a_line and buf_lines[a_line]:match("^%d+[smhd] ") ~= nil, "an age first: " .. tostring(a_line and buf_lines[a_line]))
  check(a_line and buf_lines[a_line]:find(string.format("%.1f KB", a_size / 1024), 1, true) ~= nil, "the file's size (" .. a_size .. " bytes)")

  -- <CR> opens the conversation: roles, tool calls folded, compaction and branch point marked.
  vim.api.nvim_win_set_cursor(0, { a_line, 0 })
  vim.cmd("execute \"normal \\<CR>\"")
  check(vim.api.nvim_buf_get_name(0):find("session://" .. f.a.sessionId, 1, true) ~= nil, "<CR> opened session A's buffer")
  check(lines()[1] == "# parser work", "the title is the session's name: " .. tostring(lines()[1]))
  local tool_call = find_line("▸ tool call read")
  check(tool_call ~= nil, "the tool call is shown")
  check(tool_call and vim.fn.foldclosed(tool_call + 1) == tool_call, "the tool call's arguments are folded under it")
  check(tool_call and lines()[tool_call + 1]:find("parser.py", 1, true) ~= nil, "the fold holds the arguments")
  local result_line = find_line("▸ tool result read")
  check(result_line and vim.fn.foldclosed(result_line + 1) == result_line, "the tool result is folded")
  check(find_line("## user") ~= nil and find_line("## assistant") ~= nil, "roles are headings")
  check(find_line("━━ compaction") ~= nil, "the compaction is marked")
  check(find_line("⑂ branch point: 2 branches continue from " .. f.branch_at) ~= nil, "the branch point is marked")
  check(find_line("try another way") == nil, "the other branch is not on the shown path")
  check(find_line("tests pass") ~= nil, "the path goes to the leaf")
  local order = { find_line("fix the parser"), find_line("━━ compaction"), find_line("tests pass") }
  check(order[1] and order[2] and order[3] and order[1] < order[2] and order[2] < order[3], "in path order")

  -- :SessionLabel on the entry under the cursor.
  local lexer_line = find_line("(" .. f.lexer_answer .. ")")
  vim.api.nvim_win_set_cursor(0, { lexer_line + 1, 0 }) -- the text of that message
  run("SessionLabel checkpoint")
  local labels = vim.tbl_filter(function(e) return e.type == "label" end, read_entries(f.a.path))
  check(#labels == 1 and labels[1].targetId == f.lexer_answer and labels[1].label == "checkpoint", "a label entry for that entry: " .. vim.inspect(labels))
  check(find_line("(" .. f.lexer_answer .. ")  [label: checkpoint]") ~= nil, "the buffer shows the label")

  -- :SessionName in the conversation.
  run("SessionName parser and lexer")
  local infos = vim.tbl_filter(function(e) return e.type == "session_info" end, read_entries(f.a.path))
  check(infos[#infos].name == "parser and lexer", "a session_info entry with the new name")
  check(lines()[1] == "# parser and lexer", "the buffer's title follows")

  -- :SessionFork at the entry under the cursor: a new session with the path to it.
  vim.api.nvim_win_set_cursor(0, { find_line("(" .. f.lexer_answer .. ")"), 0 })
  run("SessionFork")
  local forked_id = vim.api.nvim_buf_get_name(0):match("session://(.*)$")
  check(forked_id and forked_id ~= f.a.sessionId, "the fork's buffer is open: " .. tostring(forked_id))
  local forked_path = vim.fn.glob(vim.fn.fnamemodify(f.a.path, ":h") .. "/*" .. tostring(forked_id) .. ".jsonl")
  check(forked_path ~= "", "the fork's file is beside the original")
  if forked_path ~= "" then
    local entries = read_entries(forked_path)
    check(entries[1].type == "session" and (entries[1].parentSession == f.a.path or entries[1].parentSession == f.a.sessionId), "its header names the original: " .. vim.inspect(entries[1]) .. " " .. f.a.path)
    local texts = {}
    for _, e in ipairs(entries) do
      if e.type == "message" then table.insert(texts, e.message.content[1].text or e.message.content[1].type) end
    end
    check(vim.deep_equal(texts, { "fix the parser", "reading it", parser_body, "the parser is fixed", "now the lexer", "lexer fixed too" }),
      "it holds the path to the entry: " .. vim.inspect(texts))
    local ids = {}
    for _, e in ipairs(entries) do
      if e.id then
        check(e.parentId == nil or e.parentId == vim.NIL or ids[e.parentId], "every parentId in the fork is there (" .. e.id .. ")")
        ids[e.id] = true
      end
    end
  end
  check(find_line("lexer fixed too") ~= nil and find_line("tests pass") == nil, "the fork's buffer ends at that entry")

  -- :SessionName on a line of the list; the list shows the fork too.
  run("Sessions")
  check(#lines() == 4, "three sessions now (got " .. vim.inspect(lines()) .. ")")
  vim.api.nvim_win_set_cursor(0, { find_line("second session here"), 0 })
  run("SessionName bee")
  check(find_line("bee") ~= nil and lines()[find_line("bee")]:find("second session here", 1, true) ~= nil, "the list shows the new name")
  local b_infos = vim.tbl_filter(function(e) return e.type == "session_info" end, read_entries(f.b.path))
  check(#b_infos == 1 and b_infos[1].name == "bee", "session B's file has the name")

  -- A sidecar that reports another protocol major is refused, naming both versions.
  require("session_sidecar").stop()
  require("session_sidecar").setup({ env = { SIDECAR_TEST_REPORT_PROTOCOL_VERSION = "2.0" } })
  local before = #messages
  vim.cmd("Sessions")
  local errs = errors_since(before)
  check(#errs == 1 and errs[1]:find("speaks protocol 2.0 but this plugin speaks 1.0", 1, true) ~= nil,
    "the version mismatch is reported: " .. vim.inspect(errs))
end)
check(ok, "the test ran to its end: " .. tostring(err))
pcall(require("session_sidecar").stop)

io.stderr:write(string.format("%d checks, %d failed\n", checks, #failures))
vim.cmd(#failures == 0 and "qall!" or "cquit 1")
