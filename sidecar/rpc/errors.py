"""Every failure becomes one JSON-RPC error object: a code, a message saying what to fix, ``data`` for programs.

The service raises ``SidecarError`` values with stable codes; this module only
maps them, plus the protocol's own failures (framing, envelope, lifecycle) and
params that do not fit the method's Struct.
"""

from __future__ import annotations

import errno
import logging
import re
from typing import Any

import msgspec

from ..errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_NOT_INITIALIZED,
    SidecarError,
)

logger = logging.getLogger(__name__)

KINDS = {
    -32700: "parseError",
    INVALID_REQUEST: "invalidRequest",
    METHOD_NOT_FOUND: "methodNotFound",
    INVALID_PARAMS: "invalidParams",
    INTERNAL_ERROR: "internalError",
    SERVER_NOT_INITIALIZED: "serverNotInitialized",
}


class ProtocolError(Exception):
    """A failure of the JSON-RPC layer itself (not of a session operation)."""

    def __init__(self, code: int, message: str, **data: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = {"kind": KINDS.get(code, "error"), **data}


# What decoding a body raises for bytes that are no JSON message: broken JSON, invalid UTF-8 in a
# string (msgspec raises UnicodeDecodeError), nesting deeper than the decoder reads.
UNREADABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def unreadable(exc: Exception) -> ProtocolError:
    """The parse error for a body that does not decode (answered with the id its bytes name, if any)."""
    if isinstance(exc, UnicodeDecodeError):
        detail = "invalid UTF-8 in a string; send UTF-8 text (\\uXXXX escapes for anything else)"
    elif isinstance(exc, RecursionError):
        detail = "JSON nested too deep to read (arrays and objects within each other, hundreds of levels); send flatter values"
    else:
        detail = f"invalid JSON ({exc}); send one JSON object per message"
    return ProtocolError(PARSE_ERROR, detail)


def invalid_request(message: str, **data: Any) -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, message, **data)


def duplicate_id(msg_id: int | str, method: str) -> ProtocolError:
    """A request whose id another request in flight has: refused, the other one answered as usual."""
    return invalid_request(
        f"id {msg_id!r} is already used by a request in flight, so this {method} was not run; "
        "give every request its own id (the request in flight still gets its own answer)",
        reason="duplicateId",
        id=msg_id,
        method=method,
    )


def method_not_found(method: str) -> ProtocolError:
    return ProtocolError(
        METHOD_NOT_FOUND,
        f"unknown method {method!r}; initialize's capabilities.methods lists the methods this server has",
        method=method,
    )


def not_initialized(method: str) -> ProtocolError:
    return ProtocolError(
        SERVER_NOT_INITIALIZED,
        f"{method} before initialize; send initialize first and wait for its response",
        method=method,
    )


_FIELD_AT = re.compile(r"at `\$\.?([^`]*)`")
_FIELD_NAMED = re.compile(r"field `([^`]+)`")


def invalid_params(method: str, exc: msgspec.ValidationError | TypeError | str) -> ProtocolError:
    """-32602 naming the bad field: ``$.entries[0]`` becomes ``entries[0]``."""
    detail = str(exc)
    field = None
    at = _FIELD_AT.search(detail)
    named = _FIELD_NAMED.search(detail)
    if at is not None and at.group(1):
        field = at.group(1)
        if named is not None:  # "missing required field `x` - at `$.outer`"
            field = f"{field}.{named.group(1)}"
    elif named is not None:
        field = named.group(1)
    message = f"invalid params for {method}: {detail}"
    if field is not None and field not in detail.split(" - at ")[0]:
        message += f" (field {field})"
    data: dict[str, Any] = {"method": method}
    if field is not None:
        data["field"] = field
    return ProtocolError(INVALID_PARAMS, message, **data)


def error_object(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC ``error`` member for ``exc``."""
    if isinstance(exc, (SidecarError, ProtocolError)):
        return {"code": exc.code, "message": exc.message, "data": exc.data}
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        # A name the call was given (a cwd's project folder, a path) that the file system cannot hold.
        name = str(exc.filename or "")
        shown = name if len(name) <= 120 else name[:60] + "..." + name[-40:]
        return {
            "code": INVALID_PARAMS,
            "data": {"kind": KINDS[INVALID_PARAMS], "path": shown},
            "message": f"{shown} is a name longer than the file system allows; use a shorter cwd or path",
        }
    logger.error("internal error", exc_info=exc)
    return {
        "code": INTERNAL_ERROR,
        "message": f"internal error ({type(exc).__name__}: {exc}); the server's stderr log has the traceback. "
        "Please report it with the request that caused it",
        "data": {"kind": "internalError", "exception": type(exc).__name__},
    }
