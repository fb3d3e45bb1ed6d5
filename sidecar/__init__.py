"""session-sidecar: the session layer for coding agents, as one process speaking JSON-RPC over stdio."""

# The release version: pyproject.toml reads it from here; serverInfo.version and --version report it.
__version__ = "0.1.0"
