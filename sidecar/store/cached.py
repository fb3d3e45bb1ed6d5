"""What a session keeps beside its tree to answer fast: ``buildContext`` at one leaf, as it was answered.

The service builds it (operations/cached.py) and the file backend keeps it in its tree cache
(files/treecache.py); any session may hold one (``Session.cached_context``), None when its store keeps none.
"""

from __future__ import annotations

from typing import Any

import msgspec


class CacheDamaged(ValueError):
    """What was kept does not decode (the session is read again instead)."""


_encoder = msgspec.msgpack.Encoder()


class CachedContext(msgspec.Struct):
    """``buildContext`` (agent format, no ``since``) at ``leaf_id``, as it was answered."""

    leaf_id: str | None
    # The JSON array exactly as it goes over the wire, kept as msgpack bytes and
    # left undecoded (see json_messages): answering sends it without a copy of its own.
    messages: msgspec.Raw
    thinking_level: str
    model: dict[str, Any] | None
    models: dict[str, str]
    mode: str
    mode_data: dict[str, Any] | None
    injected_rules: list[str]
    entry_ids: list[str]
    estimated_tokens: int

    @classmethod
    def make(cls, messages_json: bytes, **fields: Any) -> CachedContext:
        return cls(messages=msgspec.Raw(_encoder.encode(messages_json)), **fields)

    def json_messages(self) -> memoryview:
        """The messages' JSON, a view of the cache file as read (no copy)."""
        view = memoryview(self.messages)
        header = _BIN_HEADERS.get(view[0]) if len(view) else None
        if header is None:
            raise CacheDamaged("the kept context is not msgpack bytes")
        return view[header:]


# msgpack's bin 8/16/32 markers and the length of each header.
_BIN_HEADERS = {0xC4: 2, 0xC5: 3, 0xC6: 5}
