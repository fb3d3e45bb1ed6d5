"""An asyncio client for session-sidecar: spawn it (or attach to streams), call every method typed.

    from session_sidecar_client import SidecarClient

    async with SidecarClient.spawn(root="/tmp/sessions") as client:
        created = await client.create("/work/app")

See README.md for the API; the types are in ``session_sidecar_client.protocol``
(generated from protocol/schema.json).
"""

from . import protocol as _protocol
from .client import DEFAULT_COMMAND, Framing, SidecarClient
from .errors import ConnectionClosed, ProtocolVersionError, RpcError, SidecarError
from .methods import UNSET, ProgressCallback, SidecarMethods, Unset
from .protocol import *  # noqa: F401,F403  (every params/result type and error class)
from .server import SidecarServer

__version__ = "0.1.0"

__all__ = [
    *_protocol.__all__,
    "DEFAULT_COMMAND",
    "UNSET",
    "ConnectionClosed",
    "Framing",
    "ProgressCallback",
    "ProtocolVersionError",
    "RpcError",
    "SidecarClient",
    "SidecarError",
    "SidecarMethods",
    "SidecarServer",
    "Unset",
]
