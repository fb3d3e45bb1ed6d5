-- session_sidecar.nvim: the commands. Configure with require("session_sidecar").setup{ cmd = {...} }.
if vim.g.loaded_session_sidecar then
  return
end
vim.g.loaded_session_sidecar = true

local function plugin()
  return require("session_sidecar")
end

local command = vim.api.nvim_create_user_command

command("Sessions", function() plugin().guarded(plugin().list)() end, { desc = "list the sessions of the current working directory" })
command("SessionFork", function() plugin().guarded(plugin().fork)() end, { desc = "fork the session at the entry under the cursor" })
command("SessionLabel", function(opts) plugin().guarded(plugin().label)(opts.args) end, { nargs = "?", desc = "label the entry under the cursor (no text: clear)" })
command("SessionName", function(opts) plugin().guarded(plugin().name)(opts.args) end, { nargs = "+", desc = "name the session under the cursor" })

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("session_sidecar", { clear = true }),
  callback = function()
    if package.loaded["session_sidecar.rpc"] then
      require("session_sidecar.rpc").stop()
    end
  end,
})
