"""The Claude Agent SDK (``claude-agent-sdk``): its ``SessionStore`` kept in the sidecar.

    from claude_agent_sdk import ClaudeAgentOptions
    from session_sidecar_client.adapters.claude_agent_sdk import SidecarSessionStore

    options = ClaudeAgentOptions(session_store=SidecarSessionStore())

The SDK is an optional dependency (``pip install 'session-sidecar[claude-agent-sdk]'``); nothing
here imports it at import time (the session summaries are folded with the SDK's own
``fold_session_summary`` when it is installed).
"""

from .store import SidecarSessionStore

__all__ = ["SidecarSessionStore"]
