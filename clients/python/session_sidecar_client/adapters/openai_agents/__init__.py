"""The OpenAI Agents SDK (``openai-agents``): its ``Session`` kept in the sidecar.

    from session_sidecar_client.adapters.openai_agents import SidecarSession

    result = await Runner.run(agent, "hello", session=SidecarSession("conversation-1"))

The SDK is an optional dependency (``pip install 'session-sidecar[openai-agents]'``);
nothing here imports it.
"""

from .items import ITEM_TYPE, LEAF_TYPE, PATCH, from_message, to_entry
from .session import CompactOptions, SidecarSession

__all__ = ["ITEM_TYPE", "LEAF_TYPE", "PATCH", "CompactOptions", "SidecarSession", "from_message", "to_entry"]
