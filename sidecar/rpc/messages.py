"""The protocol's own messages: lifecycle, progress, cancellation and the error object.

The session methods' params and results live in ``sidecar.wire``; these are
the rest of the contract, and the schema generator reads both.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .. import wire

# Major.minor. A client and a server agree when the majors match; minors add
# methods and optional fields only.
PROTOCOL_VERSION = "1.0"


class ClientInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    version: str | None = None


class InitializeParams(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Unknown fields are ignored here (only here), so an LSP client's initialize is accepted."""

    clientInfo: ClientInfo | None = None
    protocolVersion: str = PROTOCOL_VERSION
    # Serve the sessions below this folder instead of the one given on the command line.
    sessionRoot: str | None = None
    # Overrides of the settings (see Settings in the schema), merged last.
    settings: dict[str, Any] | None = None
    # The token a sidecar listening on TCP (--listen) was started with; refused without it.
    token: str | None = None
    # Over stdio: also serve other clients on this unix socket (made 0600), and go on serving
    # them after this client's stdio closes, until SIGTERM (PROTOCOL.md "Live sessions").
    keepServing: str | None = None


class ServerInfo(msgspec.Struct, kw_only=True):
    name: str
    version: str


class Capabilities(msgspec.Struct, kw_only=True):
    methods: list[str]
    framings: list[str]
    providers: list[str]
    workDoneProgress: bool = True
    cancelRequest: bool = True


class InitializeResult(msgspec.Struct, kw_only=True):
    serverInfo: ServerInfo
    protocolVersion: str
    capabilities: Capabilities
    sessionRoot: str
    settings: dict[str, Any]


class CancelParams(msgspec.Struct, kw_only=True):
    id: int | str


class WorkDoneBegin(msgspec.Struct, kw_only=True, omit_defaults=True, tag="begin", tag_field="kind"):
    title: str
    cancellable: bool = True
    message: str | None = None
    percentage: int | None = None


class WorkDoneReport(msgspec.Struct, kw_only=True, omit_defaults=True, tag="report", tag_field="kind"):
    message: str | None = None
    percentage: int | None = None


class WorkDoneEnd(msgspec.Struct, kw_only=True, omit_defaults=True, tag="end", tag_field="kind"):
    message: str | None = None


class ProgressParams(msgspec.Struct, kw_only=True):
    """``$/progress``: sent for a request that carried a ``workDoneToken``, before its response."""

    token: int | str
    value: WorkDoneBegin | WorkDoneReport | WorkDoneEnd


class ErrorObject(msgspec.Struct, kw_only=True):
    """``error`` of a failed response. ``data.kind`` names the error for programs."""

    code: int
    message: str
    data: dict[str, Any]


NOTIFICATIONS_FROM_CLIENT: dict[str, Any] = {
    "initialized": dict[str, Any] | None,
    "exit": None,
    "$/cancelRequest": CancelParams,
}


class WorkDoneProgressCreateParams(msgspec.Struct, kw_only=True):
    """``window/workDoneProgress/create`` (server -> client, LSP's): accept ``token`` by answering null."""

    token: int | str


NOTIFICATIONS_FROM_SERVER: dict[str, Any] = {
    "$/progress": ProgressParams,
    "session/didCompact": wire.DidCompactParams,
    "session/didAppend": wire.DidAppendParams,
    "session/didReload": wire.DidReloadParams,
    # live sessions (subscribers)
    "session/didChangeLeaf": wire.DidChangeLeafParams,
    "session/didSetLabel": wire.DidSetLabelParams,
    "session/didSetName": wire.DidSetNameParams,
    "session/didClose": wire.DidCloseParams,
    "session/resync": wire.ResyncParams,
    "session/didLoseControl": wire.DidLoseControlParams,
}
# Requests the server sends to the client.
REQUESTS_FROM_SERVER: dict[str, tuple[Any, Any]] = {
    "session/summarize": (wire.SummarizeParams, wire.SummarizeResult),
    "window/workDoneProgress/create": (WorkDoneProgressCreateParams, None),
}
LIFECYCLE_METHODS: dict[str, tuple[Any, Any]] = {
    "initialize": (InitializeParams, InitializeResult),
    "shutdown": (None, None),
}
