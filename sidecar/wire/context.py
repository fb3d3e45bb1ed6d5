"""Append and buildContext: what a session holds, and what goes to the model."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, UnsetType

from .base import _Params, _Result
from .fidelity import ClearedToolResults


class AppendParams(_Params):
    sessionId: str
    entries: list[dict[str, Any]]
    # Absent: below the leaf. null: a new root. An id: below that entry.
    parentId: str | None | UnsetType = UNSET
    # The leaf the client believes in (null: an empty session). When another
    # program moved it (appended to the file), nothing is written: sessionChanged.
    expectedLeafId: str | None | UnsetType = UNSET


class ExternalChange(_Result):
    """What this call found another program had done to the file since the session last saw it."""

    # Entries another program appended, now in the session (file order); the leaf moved to the last.
    entryIds: list[str]
    # The file was read again whole: "rewritten" (other bytes), "truncated", "replaced" (another
    # file renamed over it), "interleaved" (their lines went out between ours). Else null.
    reloaded: str | None = None
    # The header line was rewritten in place (oh-my-pi's title): only the header was read again.
    headerChanged: bool = False


class AppendedEntry(_Result):
    id: str
    parentId: str | None
    timestamp: str


class AppendResult(_Result):
    entries: list[AppendedEntry]
    leafId: str | None
    contextTokens: int
    shouldCompact: bool
    # Set when the file had changed behind the sidecar's back (folded in before this append).
    external: ExternalChange | None = None
    # Set when this append took the context past compaction.clearToolResults.triggerTokens and old
    # tool outputs were cleared: one custom entry, appended after the batch (leafId is that entry).
    clearedToolResults: ClearedToolResults | None = None


class BuildContextParams(_Params):
    sessionId: str
    # Absent: the session's leaf. null: before the first entry (empty context).
    leafId: str | None | UnsetType = UNSET
    format: Literal["agent", "llm"] = "agent"
    # The cursor of an earlier result: send only the messages after it when the path only grew.
    since: str | None = None
    # Whose context rules: "pi" or "omp" (oh-my-pi's, see PROTOCOL.md). Absent:
    # those of the tool whose folder the session is in (the root's compatibility).
    rules: Literal["pi", "omp"] | None = None
    # The provider and model the llm-format context is for: a compaction that recorded that
    # provider's own compaction item (``native``) for that model gives the item instead of its text.
    targetProvider: str | None = None
    targetModel: str | None = None


class ModelRef(_Result):
    provider: str | None = None
    modelId: str | None = None


class BuildContextResult(_Result):
    messages: list[dict[str, Any]]
    thinkingLevel: str
    model: dict[str, Any] | None
    models: dict[str, str]
    mode: str
    injectedRules: list[str]
    leafId: str | None
    estimatedTokens: int
    entryIds: list[str]
    # Always sent. True: messages and entryIds hold only what follows ``since`` (the client keeps
    # its first baseCount messages). False: the whole context (baseCount 0), with rebuildReason
    # when a ``since`` was sent and could not be followed.
    delta: bool
    baseCount: int
    modeData: dict[str, Any] | None = None
    # Give back as ``since`` to get only what follows this result.
    cursor: str | None = None
    rebuildReason: str | None = None
    # Set when the file had changed behind the sidecar's back (folded in before this answer).
    external: ExternalChange | None = None
