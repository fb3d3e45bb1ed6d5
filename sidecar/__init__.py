"""session-sidecar: the session layer for coding agents, as one process speaking JSON-RPC over stdio."""

__version__ = (
    "0.1.0"  # the release version: pyproject.toml reads it from here; serverInfo.version and --version report it
)
