-- One session-sidecar process per Neovim, spoken to with Neovim's own JSON-RPC
-- client (vim.lsp.rpc: the sidecar's default framing is LSP's Content-Length).
-- Calls are synchronous for the commands' sake: each waits (vim.wait, so the
-- editor keeps processing events) for its answer.
local M = {}

M.PROTOCOL_VERSION = "1.0"

local client = nil -- the vim.lsp.rpc client of the running sidecar
local info = nil -- its initialize result

-- vim.lsp.rpc's client in 0.7 is {pid, handle, request, notify}; later ones add
-- is_closing/terminate. These work on both.
local function is_closing(rpc)
  if rpc.is_closing then
    return rpc.is_closing()
  end
  return rpc.handle == nil or rpc.handle:is_closing()
end

local function terminate(rpc)
  if rpc.terminate then
    rpc.terminate()
  elseif not is_closing(rpc) then
    rpc.handle:kill(15)
  end
end

-- 0.10 takes the command as one list; 0.7-0.9 take the program and its arguments apart.
local function spawn(program, args, dispatchers, extra)
  if vim.fn.has("nvim-0.10") == 1 then
    return vim.lsp.rpc.start(vim.list_extend({ program }, args), dispatchers, extra)
  end
  return vim.lsp.rpc.start(program, args, dispatchers, extra)
end

local function major(version)
  return (tostring(version):match("^([^.]*)"))
end

local function format_error(method, err)
  if type(err) == "table" then
    local kind = type(err.data) == "table" and err.data.kind or nil
    return string.format("session-sidecar: %s failed: %s%s", method, err.message or vim.inspect(err), kind and (" (" .. kind .. ")") or "")
  end
  return string.format("session-sidecar: %s failed: %s", method, tostring(err))
end

-- The answer to one request; raises a Lua error with the sidecar's message.
local function wait_for(rpc, method, params, timeout_ms)
  local done, err, result = false, nil, nil
  local sent = rpc.request(method, params or vim.empty_dict(), function(e, r)
    done, err, result = true, e, r
  end)
  if not sent then
    error("session-sidecar: the sidecar is not running (could not send " .. method .. ")", 0)
  end
  if not vim.wait(timeout_ms or 30000, function() return done end, 5) then
    error("session-sidecar: no answer to " .. method .. " within " .. (timeout_ms or 30000) .. " ms", 0)
  end
  if err then
    error(format_error(method, err), 0)
  end
  return result
end

-- Start the sidecar (config.cmd: a list, the program and its leading arguments)
-- and initialize it; fail with both versions named when its protocol's major
-- differs from ours.
function M.start(config)
  if client and not is_closing(client) then
    return info
  end
  local cmd = vim.deepcopy(config.cmd)
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  local program = table.remove(cmd, 1)
  if vim.fn.executable(program) ~= 1 then
    error("session-sidecar: cannot run '" .. program .. "': not executable or not on PATH (set cmd in require('session_sidecar').setup{})", 0)
  end
  local stderr = {}
  local rpc = spawn(program, cmd, {
    on_error = function(code, e)
      table.insert(stderr, tostring(code) .. ": " .. vim.inspect(e))
    end,
    on_exit = function()
      client, info = nil, nil
    end,
  }, { env = config.env })
  local params = {
    clientInfo = { name = "session_sidecar.nvim", version = "0.1.0" },
    protocolVersion = M.PROTOCOL_VERSION,
  }
  if config.root then
    params.sessionRoot = vim.fn.fnamemodify(config.root, ":p")
  end
  local ok, result = pcall(wait_for, rpc, "initialize", params, config.startup_timeout_ms or 30000)
  if ok and major(result.protocolVersion) ~= major(M.PROTOCOL_VERSION) then
    ok, result = false, string.format(
      "session-sidecar speaks protocol %s but this plugin speaks %s: the major versions must match; "
        .. "run a session-sidecar whose protocol is %s.x",
      tostring(result.protocolVersion), M.PROTOCOL_VERSION, major(M.PROTOCOL_VERSION))
  elseif not ok and type(result) == "string" and result:match("protocolVersion") then
    result = result .. " (this plugin speaks protocol " .. M.PROTOCOL_VERSION .. ")"
  end
  if not ok then
    terminate(rpc)
    error(result, 0)
  end
  rpc.notify("initialized", vim.empty_dict())
  client, info = rpc, result
  return info
end

function M.request(config, method, params)
  M.start(config)
  return wait_for(client, method, params, config.timeout_ms)
end

function M.info()
  return info
end

-- Ask the sidecar to end (shutdown, exit): it flushes and closes every session.
function M.stop()
  local rpc = client
  if not rpc or is_closing(rpc) then
    return
  end
  pcall(wait_for, rpc, "shutdown", nil, 5000)
  rpc.notify("exit", nil)
  vim.wait(5000, function() return client == nil end, 10)
  if client then
    terminate(rpc)
    client = nil
  end
end

return M
