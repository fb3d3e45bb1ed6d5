# The tools session/import reads (run.py), named here so that the command line's parser lists them
# without importing the importers.
TOOLS = ("codex", "claude-code", "opencode", "spec")
