"""``initialize``, and what its answer lists.

``sidecar.rpc.boot`` answers a well-formed first ``initialize`` with this
before the server is set up; the server's ``initialize`` feature runs the
very same function for every other case, so both paths give the same answer.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from .. import __version__
from ..config import Settings, SettingsError, apply_overrides
from ..errors import INVALID_PARAMS
from ..service import SessionService
from ..service.methods import ROUTES, Route
from .errors import ProtocolError, invalid_params
from .framing import FRAMINGS
from .messages import PROTOCOL_VERSION, Capabilities, InitializeParams, InitializeResult, ServerInfo
from .unixsock import bind_unix

SERVER_NAME = "session-sidecar"
# The routes that take the connection they came on (subscriptions and roles are a client's).
LIVE_METHODS = tuple(name for name, route in ROUTES.items() if route.takes_client)

# For the clients' tests only: the protocolVersion initialize reports, so a
# client's check of it meets a sidecar that answers with a version it does not
# speak. What the server accepts from the client is unchanged.
REPORTED_PROTOCOL_ENV = "SIDECAR_TEST_REPORT_PROTOCOL_VERSION"


P = TypeVar("P", bound=msgspec.Struct)


def reported_protocol_version() -> str:
    return os.environ.get(REPORTED_PROTOCOL_ENV) or PROTOCOL_VERSION


def decode_params(method: str, params: object, params_type: type[P]) -> P:
    """``params`` (a dict, or None when absent) as ``params_type``; -32602 naming the bad field otherwise."""
    if isinstance(params, params_type) and type(params) is params_type:  # decoded with its request (handle_body)
        return params
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise invalid_params(method, "params must be an object of named parameters, not an array or a scalar")
    try:
        decoded: P = msgspec.convert(params, params_type)
    except msgspec.ValidationError as exc:
        raise invalid_params(method, exc) from None
    for field in PATH_FIELDS:
        value = getattr(decoded, field, None)
        if value is None:
            continue
        text = value if isinstance(value, str) else "".join(value)
        if "\x00" in text:
            raise invalid_params(
                method, f"field `{field}` holds a NUL character, which no file name or folder can hold; remove it"
            )
        if not text.isascii() and _LONE_SURROGATE.search(text):
            raise invalid_params(
                method,
                f"field `{field}` holds a lone UTF-16 surrogate (such as \\ud83d, a string "
                "cut inside an emoji), which no file name or folder can hold; send the "
                "path whole",
            )
    cwd = getattr(decoded, "cwd", None)
    if isinstance(cwd, str) and not os.path.isabs(cwd):
        # A project folder is absolute: "" or "src" would be filed under a folder named after the
        # sidecar's own working directory's accident ("----", "--src--") and never listed with the project.
        raise invalid_params(
            method,
            f'field `cwd` must be an absolute path (the project\'s folder, e.g. "/home/me/project"), not {cwd!r}',
        )
    return decoded


# A lone surrogate is accepted in every other string (format/codec.py), but a path names a place on disk,
# whose names are bytes a surrogate is not: it is refused before it reaches the file system.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# The params that name a file or a folder (PROTOCOL.md): a NUL in one is refused before it reaches
# the file system, which would raise in the middle of the call.
PATH_FIELDS = ("cwd", "path", "paths", "targetRoot", "folder", "sessionRoot")


def served_methods() -> dict[str, Route]:
    """The routes any caller may call (``session-sidecar call`` too): all but the live ones."""
    return {name: route for name, route in ROUTES.items() if not route.takes_client}


def advertised_methods() -> list[str]:
    """initialize's ``capabilities.methods``: the lifecycle's and every route's."""
    return ["initialize", "shutdown", *sorted(ROUTES)]


def provider_names() -> list[str]:
    """Summarizing providers this build has (configured or not)."""
    from ..providers import available

    return sorted(available())


def initialize(params: Any, base_settings: Settings, default_root: Path) -> tuple[SessionService, InitializeResult]:
    """The service ``initialize`` asks for, and the answer; raises the error to answer instead.

    Changes nothing outside the new service: the caller serves it and moves
    the lifecycle on.
    """
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
        settings = apply_overrides(base_settings, decoded.settings or {}, "settings")
    except SettingsError as exc:
        raise invalid_params("initialize", str(exc).replace("at `$", "at `$.settings")) from None
    root = Path(decoded.sessionRoot).expanduser().absolute() if decoded.sessionRoot else default_root
    service = SessionService(root, settings)
    if decoded.keepServing:  # bound now, so that a path in use is this answer's error (rpc/sockets.py serves it)
        path = Path(decoded.keepServing).expanduser().absolute()
        service.live.keep_serving = (bind_unix(path), path)
    service.raw_results = True  # every result is encoded for the wire
    result = InitializeResult(
        serverInfo=ServerInfo(name=SERVER_NAME, version=__version__),
        protocolVersion=reported_protocol_version(),
        capabilities=Capabilities(
            methods=advertised_methods(),
            framings=list(FRAMINGS),
            providers=provider_names(),
        ),
        sessionRoot=str(root),
        settings=msgspec.to_builtins(service.settings),  # with the compatibility the root was given
    )
    return service, result
