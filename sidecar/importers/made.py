"""Entries an importer writes as their lines at once (``Builder.made``, ``Assistant``), not as dicts.

Most of an imported session's entries are never changed once made (tool results, user messages,
kept records) or only filled before they are done (an assistant message): their lines are written
from their pieces, the JSON text a source gave kept as it came (``msgspec.Raw``), with the same keys
in the same order as the dicts the store would encode (tests/importers/test_made_lines.py checks
they are the very entries of those dicts).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..format.codec import encode as json_bytes
from ..format.entry import BLOB_MARK, Entry
from ..format.lineread import SharedHead

# The heads of the messages ``Builder.made`` writes (the store's _head_of would read the same from their dicts).
TOOL_RESULT_HEAD, USER_HEAD = SharedHead("toolResult"), SharedHead("user")


def json_text(value: object) -> bytes:
    """``value`` as JSON text: a ``msgspec.Raw`` (JSON text as the source wrote it) as it is."""
    return value if type(value) is msgspec.Raw else json_bytes(value)


def tool_result_fields(
    call_id: str, name: str, text: object, ms: int, is_error: bool = False, details: object = None
) -> tuple[bytes, ...]:
    """The pieces of ``"message":`` and the JSON text of ``tool_result(...)``: the same keys in the same
    order, a Raw ``text`` or ``details`` written as it is."""
    if isinstance(text, list):
        content: tuple[bytes, ...] = (json_bytes(text),)
    else:
        if not isinstance(text, (str, msgspec.Raw)):
            text = msgspec.json.encode(text).decode()
        content = (b'[{"type":"text","text":', json_text(text), b"}]")
    tail: tuple[bytes, ...] = (b',"isError":', b"true" if is_error else b"false", b',"timestamp":', json_bytes(ms))
    if details is not None:
        tail += (b',"details":', json_text(details))
    return (
        b'"message":{"role":"toolResult","toolCallId":',
        json_bytes(call_id),
        b',"toolName":',
        json_bytes(name),
        b',"content":',
        *content,
        *tail,
        b"}",
    )


def line_entry(
    entry_id: str, parent: str | None, timestamp: str, kind: str, fields: tuple[bytes, ...], head: SharedHead | None
) -> Entry:
    """``Builder.made``'s entry: the envelope's JSON text then ``fields``, joined once."""
    line = b"".join(
        (
            b'{"type":"',
            kind.encode(),
            b'","id":',
            json_bytes(entry_id),
            b',"parentId":',
            b"null" if parent is None else json_bytes(parent),
            b',"timestamp":',
            json_bytes(timestamp),
            b",",
            *fields,
            b"}",
        )
    )
    return Entry(kind, entry_id, parent, timestamp, line, head, has_blobs=BLOB_MARK in line)


class Assistant:
    """An assistant message being filled (an importer adds the blocks of one model response as it reads
    them), written as the line ``assistant_message`` would give once complete (``made``). Each block is
    written as JSON text when added, while it is at hand: encoding them all at the end cost more."""

    __slots__ = ("id", "parent", "timestamp", "ms", "api", "provider", "model", "usage", "stop", "content")

    def __init__(
        self,
        entry_id: str,
        parent: str | None,
        timestamp: str,
        ms: int,
        api: str,
        provider: str,
        model: str,
        usage_text: msgspec.Raw,
        stop: str,
    ) -> None:
        self.id, self.parent, self.timestamp, self.ms = entry_id, parent, timestamp, ms
        self.api, self.provider, self.model, self.usage = api, provider, model, usage_text
        self.stop = stop
        self.content: list[bytes] = []  # the blocks' JSON texts

    def add(self, block: dict[str, object]) -> None:
        self.content.append(json_bytes(block))

    def blocks(self) -> list[dict[str, Any]]:
        """The blocks as objects again (json: a block may hold a lone surrogate)."""
        return [json.loads(text) for text in self.content]

    def made(self) -> Entry:
        shared = _assistant_shared(self.api, self.provider, self.model)
        stop = _stops.get(self.stop) or b',"stopReason":%b,"timestamp":' % json_bytes(self.stop)
        parent, timestamp = self.parent, self.timestamp
        line = b"".join(
            (
                b'{"type":"message","id":',
                json_bytes(self.id),
                b',"parentId":',
                b"null" if parent is None else json_bytes(parent),
                b',"timestamp":',
                json_bytes(timestamp),
                b',"message":{"role":"assistant","content":[',
                b",".join(self.content),
                shared[1],
                self.usage,
                stop,
                json_bytes(self.ms),
                b"}}",
            )
        )
        return Entry("message", self.id, parent, timestamp, line, shared[0], has_blobs=BLOB_MARK in line)


def _assistant_shared(api: str, provider: str, model: str) -> tuple[SharedHead, bytes]:
    key = (api, provider, model)
    shared = _assistant_parts.get(key)
    if shared is None:  # (one per model: written once)
        shared = (
            SharedHead("assistant", provider, model),
            b'],"api":%b,"provider":%b,"model":%b,"usage":'
            % (json_bytes(api), json_bytes(provider), json_bytes(model)),
        )
        if len(_assistant_parts) < 4096:
            _assistant_parts[key] = shared
    return shared


def assistant_head(api: str, provider: str, model: str) -> SharedHead:
    """The head the assistant messages of one (api, provider, model) share (the compiled Codex mapping's too)."""
    return _assistant_shared(api, provider, model)[0]


# The shared head and the JSON text between the content and the usage of the assistant messages of one
# (api, provider, model); the JSON text from the usage to the time of each stop reason.
_assistant_parts: dict[tuple[object, ...], tuple[SharedHead, bytes]] = {}
_stops = {stop: b',"stopReason":"%b","timestamp":' % stop.encode() for stop in ("stop", "toolUse", "length")}
