"""One method, answered in this process: what ``session-sidecar call`` runs.

``call`` used to spawn a second sidecar and talk to it over a pipe: two
interpreters started and two sets of imports (the client's and the
server's) for one answer, ~2x the time a caller waits. Here the service is
made as ``initialize`` makes it (``lifecycle.initialize``, the same settings
and root), the params are decoded as the server's handlers decode them
(``decode_params``), the method's route runs once (a coroutine on its own event
loop), every session it opened is closed as at ``shutdown``, and the
answer or the error object is exactly what the server would have sent.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import msgspec

from ..config import Settings
from .errors import error_object
from .lifecycle import decode_params, initialize, served_methods


def serves(method: str) -> bool:
    """``method`` is a session method the service answers (``initialize``, ``shutdown`` and unknown names are not)."""
    return method in served_methods()


def call_once(method: str, params: Any, root: Path, settings: Settings) -> tuple[bool, Any]:
    """(True, the result as plain JSON values) or (False, the JSON-RPC error object)."""
    route = served_methods()[method]
    service = None
    try:
        service, _ = initialize(None, settings, root)
        answer = route.call(service, decode_params(method, params, route.params))
        if inspect.isawaitable(answer):
            answer = asyncio.run(_awaited(answer))
        return True, msgspec.json.decode(msgspec.json.encode(answer))
    except Exception as exc:
        return False, error_object(exc)
    finally:
        if service is not None:
            service.close_all()


async def _awaited(answer: Any) -> Any:
    return await answer
