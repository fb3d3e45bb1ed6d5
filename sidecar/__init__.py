"""session-sidecar: the session layer for coding agents, as one process speaking JSON-RPC over stdio."""

__version__ = "0.1.0"
