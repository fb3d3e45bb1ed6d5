"""The features: lifecycle handlers and one thin handler per method of ``sidecar.wire.METHODS``.

A session handler decodes params into the method's Struct, asks the
dispatcher to run the service call in the session's turn, and returns the
result Struct (the protocol encodes it). Nothing here decides anything
about sessions.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import msgspec

from .. import __version__, wire
from ..config import SettingsError, apply_overrides
from ..errors import INVALID_PARAMS
from ..service import SessionService
from .dispatch import queue_key
from .errors import ProtocolError, invalid_params
from .framing import FRAMINGS
from .messages import PROTOCOL_VERSION, Capabilities, InitializeParams, InitializeResult, ServerInfo

if TYPE_CHECKING:
    from .server import SidecarServer

SERVER_NAME = "session-sidecar"


def decode_params(method: str, params: Any, params_type: type) -> Any:
    """``params`` (a dict, or None when absent) as ``params_type``; -32602 naming the bad field otherwise."""
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise invalid_params(method, "params must be an object of named parameters, not an array or a scalar")
    try:
        return msgspec.convert(params, params_type)
    except msgspec.ValidationError as exc:
        raise invalid_params(method, exc) from None


def service_attribute(method: str) -> str:
    """``session/buildContext`` -> ``build_context``: the SessionService method serving it."""
    name = method.split("/", 1)[1]
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def served_methods() -> dict[str, tuple[type, str]]:
    """Methods of the contract the service implements: name -> (params type, service attribute)."""
    served = {}
    for method, (params_type, _result) in wire.METHODS.items():
        attribute = service_attribute(method)
        if callable(getattr(SessionService, attribute, None)):
            served[method] = (params_type, attribute)
    return served


def provider_names() -> list[str]:
    """Summarizing providers this build has (``sidecar.providers.available()`` when it exists)."""
    try:
        package = importlib.import_module("sidecar.providers")
    except ImportError:
        return []
    available = getattr(package, "available", None)
    if callable(available):
        return sorted(available())
    ignored = {"base", "client", "registry"}
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_") and m.name not in ignored)


def register(server: "SidecarServer") -> None:
    methods = served_methods()

    @server.feature("initialize")
    def initialize(ls: "SidecarServer", params: Any, msg_id: Any) -> InitializeResult:
        decoded = decode_params("initialize", params, InitializeParams)
        client_major = decoded.protocolVersion.split(".", 1)[0]
        if client_major != PROTOCOL_VERSION.split(".", 1)[0]:
            raise ProtocolError(
                INVALID_PARAMS,
                f"protocolVersion {decoded.protocolVersion} is not supported; this server speaks {PROTOCOL_VERSION}",
                field="protocolVersion",
                supported=PROTOCOL_VERSION,
            )
        try:
            settings = apply_overrides(ls.base_settings, decoded.settings or {}, "settings")
        except SettingsError as exc:
            raise invalid_params("initialize", str(exc).replace("at `$", "at `$.settings")) from None
        root = Path(decoded.sessionRoot).expanduser().absolute() if decoded.sessionRoot else ls.default_root
        ls.attach(SessionService(root, settings))
        ls.protocol.state = "ready"
        return InitializeResult(
            serverInfo=ServerInfo(name=SERVER_NAME, version=__version__),
            protocolVersion=PROTOCOL_VERSION,
            capabilities=Capabilities(
                methods=["initialize", "shutdown", *sorted(methods)],
                framings=list(FRAMINGS),
                providers=provider_names(),
            ),
            sessionRoot=str(root),
            settings=msgspec.to_builtins(settings),
        )

    @server.feature("shutdown")
    async def shutdown(ls: "SidecarServer", params: Any, msg_id: Any) -> None:
        # The protocol already refuses everything but exit (state "shutdown").
        await ls.drain(but=msg_id)
        await asyncio.get_running_loop().run_in_executor(ls.thread_pool, ls.close_sessions)
        return None

    for method, (params_type, attribute) in methods.items():
        server.feature(method)(_session_handler(method, params_type, attribute))


def _session_handler(method: str, params_type: type, attribute: str) -> Callable[..., Any]:
    operation = getattr(SessionService, attribute)
    takes_work = "work" in inspect.signature(operation).parameters
    on_loop = inspect.iscoroutinefunction(operation)

    async def handle(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params(method, params, params_type)
        bound = getattr(ls.service, attribute)
        if takes_work:
            call: Callable[[Any], Any] = lambda work: bound(decoded, work=work)
        else:
            call = lambda work: bound(decoded)
        return await ls.dispatcher.run(msg_id, method, queue_key(decoded), decoded.workDoneToken, call, on_loop)

    handle.__name__ = f"handle_{attribute}"
    return handle
