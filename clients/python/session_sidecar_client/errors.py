"""Errors raised by the client.

``RpcError`` is an error answer from the server: ``code``, ``message`` and
``data`` as sent (``data["kind"]`` names the error). Every code in the
schema's error table has its own subclass (``SessionNotFoundError``,
``InvalidParamsError``...; see ``protocol.py``), so either catch the class or
compare ``error.code`` / ``error.kind``. ``ConnectionClosed`` means the
sidecar went away (or the client was closed) before answering.
"""

from __future__ import annotations

import signal as _signal
from typing import Any, ClassVar


class SidecarError(Exception):
    """Base of everything this package raises on purpose."""


class RpcError(SidecarError):
    """An error answer from the server (or one to send back for a server->client request)."""

    code_value: ClassVar[int | None] = None
    kind_value: ClassVar[str | None] = None

    def __init__(self, code: int | None = None, message: str = "", data: Any = None) -> None:
        code = self.code_value if code is None else code
        if code is None:
            raise TypeError("RpcError needs a code")
        super().__init__(f"{code}: {message}" if message else str(code))
        self.code: int = code
        self.message: str = message
        data = dict(data) if isinstance(data, dict) else {}
        if self.kind_value is not None:
            data.setdefault("kind", self.kind_value)
        self.data: dict[str, Any] = data
        # The id the sidecar answered with, for an error ``on_protocol_error`` gets: null where it could
        # not read the frame's id, else the id it read (a frame sent raw, or a call already abandoned).
        self.request_id: int | str | None = None

    @property
    def kind(self) -> str | None:
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object."""
        return {"code": self.code, "message": self.message, "data": self.data}

    @staticmethod
    def from_error_object(error: Any) -> RpcError:
        """The most specific class for a JSON-RPC ``error`` object."""
        from .protocol import ERROR_CLASSES

        error = error if isinstance(error, dict) else {}
        code = error.get("code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else -32603
        cls = ERROR_CLASSES.get(code, RpcError)
        return cls(code, str(error.get("message", "")), error.get("data"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"


class ConnectionClosed(SidecarError, ConnectionError):
    """The sidecar exited or its stream ended (or the client was closed) before the answer came.

    ``returncode`` is the process's exit code as asyncio gives it (``-9`` after
    SIGKILL); ``signal`` names the signal that ended it (``"SIGKILL"``), else None.
    """

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.signal: str | None = signal_name(returncode)


def signal_name(returncode: int | None) -> str | None:
    """``"SIGKILL"`` for a returncode of -9 (asyncio's way of saying a signal ended the process)."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return _signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def describe_exit(returncode: int | None) -> str:
    """How the process ended, in words: "killed by SIGKILL", "exited with code 2"."""
    if returncode is None:
        return "still running"
    name = signal_name(returncode)
    return f"killed by {name}" if name else f"exited with code {returncode}"


class ProtocolVersionError(SidecarError):
    """The sidecar speaks a protocol this client does not: their major versions differ (PROTOCOL.md, Lifecycle)."""

    def __init__(self, server_version: str, client_version: str) -> None:
        super().__init__(
            f"session-sidecar speaks protocol {server_version} but this client speaks {client_version}: "
            f"the major versions must match; run a session-sidecar whose protocol is {major(client_version)}.x "
            f"or use a client for protocol {server_version}"
        )
        self.server_version = server_version
        self.client_version = client_version


def major(version: str) -> str:
    """The major part of a protocolVersion ("1.0" -> "1")."""
    return version.split(".", 1)[0]


def check_protocol_version(server_version: object, client_version: str) -> None:
    """Raise ``ProtocolVersionError`` unless the server's protocolVersion has the client's major."""
    if not isinstance(server_version, str) or major(server_version) != major(client_version):
        raise ProtocolVersionError(str(server_version), client_version)
