-- Text of the two buffers: the session list and a conversation. Pure functions
-- of the sidecar's answers: each returns the lines, what entry (or session)
-- each line stands for, and the ranges to fold.
local M = {}

local function one_line(text, max)
  text = tostring(text or ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  if max and #text > max then
    text = text:sub(1, max - 1) .. "…"
  end
  return text
end

-- "45s", "12m", "3h", "5d" since an ISO-8601 UTC timestamp ("2026-11-25T10:41:17.123Z").
function M.age(timestamp, now)
  local y, mo, d, h, mi, s = tostring(timestamp):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return "?"
  end
  -- os.time reads a table as local time: read "now in UTC" the same way, so the offsets cancel.
  local then_ = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) })
  local seconds = math.max(0, (now or os.time(os.date("!*t"))) - then_)
  if seconds < 60 then
    return seconds .. "s"
  elseif seconds < 3600 then
    return math.floor(seconds / 60) .. "m"
  elseif seconds < 86400 then
    return math.floor(seconds / 3600) .. "h"
  end
  return math.floor(seconds / 86400) .. "d"
end

function M.size(bytes)
  if not bytes then
    return "-"
  elseif bytes < 1024 then
    return bytes .. " B"
  elseif bytes < 1024 * 1024 then
    return string.format("%.1f KB", bytes / 1024)
  end
  return string.format("%.1f MB", bytes / (1024 * 1024))
end

-- The list: one line per session, newest first (as session/list orders them).
function M.list(sessions, cwd)
  local lines = { "Sessions of " .. cwd .. "   (<CR> open, :SessionFork, :SessionName NAME)" }
  local targets = {}
  if #sessions == 0 then
    table.insert(lines, "  (none)")
  end
  for _, s in ipairs(sessions) do
    local stat = vim.loop.fs_stat(s.path)
    table.insert(lines, string.format("%-5s %9s  %-24s %s",
      M.age(s.modified), M.size(stat and stat.size), one_line(s.name or "-", 24), one_line(s.firstMessage, 80)))
    targets[#lines] = { sessionId = s.sessionId, path = s.path }
  end
  return lines, targets
end

local function blocks(content)
  if type(content) == "string" then
    return { { type = "text", text = content } }
  end
  return type(content) == "table" and content or {}
end

local function add_text(lines, text, indent)
  for _, line in ipairs(vim.split(tostring(text), "\n", { plain = true })) do
    table.insert(lines, indent .. line)
  end
end

-- The conversation on the path from the root to `leafId`, in order. `nodes`:
-- session/getTree's flat list (for children and labels); `entries`: the
-- path's entries as stored (session/getEntries), by id.
function M.conversation(header, nodes, leaf_id, entries_by_id, title)
  local by_id, children = {}, {}
  for _, node in ipairs(nodes) do
    by_id[node.id] = node
    if node.parentId then
      children[node.parentId] = (children[node.parentId] or 0) + 1
    end
  end
  local path = {}
  local id = leaf_id
  while id and by_id[id] do
    table.insert(path, 1, id)
    id = by_id[id].parentId
  end

  local lines = { "# " .. title, "  session " .. header.id .. "   cwd " .. (header.cwd or "?"), "" }
  local targets, folds = {}, {}
  local function fold_from(start)
    if #lines > start then
      table.insert(folds, { start, #lines })
    end
  end

  for _, entry_id in ipairs(path) do
    local entry = entries_by_id[entry_id] or {}
    local node = by_id[entry_id]
    local first = #lines + 1
    local label = node.label and ("  [label: " .. node.label .. "]") or ""
    local kind = entry.type or node.type
    if kind == "message" then
      local message = entry.message or {}
      local role = message.role or "?"
      if role == "toolResult" then
        table.insert(lines, string.format("▸ tool result %s%s  (%s)%s", message.toolName or "", message.isError and " [error]" or "", entry_id, label))
        local start = #lines
        for _, block in ipairs(blocks(message.content)) do
          add_text(lines, block.text or ("[" .. (block.type or "?") .. "]"), "    ")
        end
        fold_from(start)
      else
        table.insert(lines, string.format("## %s  (%s)%s", role, entry_id, label))
        for _, block in ipairs(blocks(message.content)) do
          if block.type == "text" then
            add_text(lines, block.text or "", "")
          elseif block.type == "thinking" then
            table.insert(lines, "▸ thinking")
            local start = #lines
            add_text(lines, block.thinking or "", "    ")
            fold_from(start)
          elseif block.type == "toolCall" then
            table.insert(lines, string.format("▸ tool call %s  %s", block.name or "?", one_line(vim.json.encode(block.arguments or vim.empty_dict()), 60)))
            local start = #lines
            add_text(lines, vim.fn.json_encode(block.arguments or vim.empty_dict()), "    ")
            fold_from(start)
          elseif block.type == "image" then
            table.insert(lines, "[image " .. (block.mimeType or "") .. "]")
          end
        end
        if role == "bashExecution" and message.command then
          add_text(lines, "$ " .. message.command, "")
        end
      end
    elseif kind == "compaction" then
      table.insert(lines, string.format("━━ compaction  (%s)%s: %s tokens before; the summary:", entry_id, label, tostring(entry.tokensBefore or "?")))
      local start = #lines
      add_text(lines, entry.summary or "", "    ")
      fold_from(start)
    elseif kind == "branch_summary" then
      table.insert(lines, string.format("━━ branch summary  (%s)%s:", entry_id, label))
      local start = #lines
      add_text(lines, entry.summary or "", "    ")
      fold_from(start)
    elseif kind == "session_info" then
      table.insert(lines, string.format("── named %q  (%s)", entry.name or "", entry_id))
    elseif kind == "label" then
      table.insert(lines, string.format("── label %s on %s  (%s)", entry.label and string.format("%q", entry.label) or "cleared", entry.targetId or "?", entry_id))
    elseif kind == "model_change" then
      table.insert(lines, string.format("── model %s/%s  (%s)", entry.provider or "?", entry.modelId or "?", entry_id))
    else
      table.insert(lines, string.format("── %s  (%s)%s", tostring(kind), entry_id, label))
    end
    if (children[entry_id] or 0) > 1 then
      table.insert(lines, string.format("⑂ branch point: %d branches continue from %s", children[entry_id], entry_id))
    end
    table.insert(lines, "")
    for lnum = first, #lines do
      targets[lnum] = entry_id
    end
  end
  return lines, targets, folds
end

return M
