"""The records of a spec session file and its metadata, as msgspec Structs: they are the schema.

Spec section 7.2: every line has ``recordType`` and ``schemaVersion``; ``content``
is always a list of blocks (text or toolCall), never a bare string. Section 7.3:
the metadata. ``SessionMetrics`` (section 14 of the spec, not given to us) is
our reading: token totals summed over the assistant messages' usage.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from ...format.codec import encode_js, parse_as

SCHEMA_VERSION = 1


class TextBlock(msgspec.Struct, tag_field="type", tag="text", forbid_unknown_fields=True):
    text: str


class ToolCallBlock(msgspec.Struct, tag_field="type", tag="toolCall", forbid_unknown_fields=True):
    id: str
    name: str
    arguments: dict[str, object]


ContentBlock = TextBlock | ToolCallBlock


class MessageRecord(msgspec.Struct, tag_field="recordType", tag="message", kw_only=True):
    schemaVersion: int = SCHEMA_VERSION
    seq: int
    role: Literal["user", "assistant", "toolResult"]
    content: list[ContentBlock]
    toolCallId: str | UnsetType = UNSET  # present when role is toolResult
    isError: bool | UnsetType = UNSET  # present when role is toolResult
    timestamp: str


class CompactionRecord(msgspec.Struct, tag_field="recordType", tag="compaction", kw_only=True):
    schemaVersion: int = SCHEMA_VERSION
    seq: int
    firstKeptSeq: int  # messages with seq < this are superseded by the summary
    summary: str
    tokensBefore: int
    readFiles: list[str]  # cumulative over all compacted history
    modifiedFiles: list[str]
    timestamp: str


Record = MessageRecord | CompactionRecord


class SessionMetrics(msgspec.Struct, kw_only=True):
    inputTokens: int = 0
    outputTokens: int = 0
    cacheReadTokens: int = 0
    cacheWriteTokens: int = 0
    totalTokens: int = 0
    assistantMessages: int = 0


class SessionMetadata(msgspec.Struct, kw_only=True):
    id: str
    name: str | None = None
    createdAt: str
    lastMessageAt: str
    model: str
    messageCount: int
    source: Literal["interactive", "cron"] = "interactive"
    cronJobId: str | None = None
    systemPromptOverride: str | None = None
    metrics: SessionMetrics | None = None


_record_decoder = msgspec.json.Decoder(Record)
_metadata_decoder = msgspec.json.Decoder(SessionMetadata)
_encoder = msgspec.json.Encoder()


def decode_record(line: bytes) -> Record:
    """One line of session.jsonl; ``msgspec.ValidationError``/``DecodeError`` when it is not a record."""
    return parse_as(line, _record_decoder, Record)  # (a lone surrogate escape kept, as JSON.parse reads it)


def encode_record(record: Record) -> bytes:
    return encode_js(_encoder.encode, record)  # (a lone surrogate as JSON.stringify's escape)


def decode_metadata(data: bytes) -> SessionMetadata:
    return parse_as(data, _metadata_decoder, SessionMetadata)


def encode_metadata(metadata: SessionMetadata) -> bytes:
    """Optional fields (name, cronJobId, ...) are left out when unset; required ones, ``source`` too, never are."""
    obj = {k: v for k, v in msgspec.to_builtins(metadata).items() if v is not None}
    return msgspec.json.format(encode_js(_encoder.encode, obj), indent=2) + b"\n"
