-- The plugin on the runtime path, as a plugin manager puts it; nothing else of the user's.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)tests/") or "./"
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ":p"))
vim.opt.swapfile = false
