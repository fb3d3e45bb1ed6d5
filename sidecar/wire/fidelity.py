"""Context fidelity: tool-result clearing, provider-native compaction items."""

from __future__ import annotations

from typing import Any

import msgspec

from .base import _Result


class ClearedToolResults(_Result):
    """Old tool outputs the context now shows as a placeholder (the file keeps them in full)."""

    entryId: str  # the custom entry (customType "sidecar.prune") that records the clearing
    toolResultIds: list[str]
    tokensFreed: int  # estimated
    contextTokensBefore: int


class NativeCompaction(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A provider's opaque compaction item: Anthropic's ``compaction`` content block, or the
    OpenAI Responses ``compaction`` output item. Sent back only to that provider and model."""

    provider: str  # "anthropic", "openai", or any name the client gives its provider
    model: str
    item: dict[str, Any]
