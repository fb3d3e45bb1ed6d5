"""Fork, list, archive, delete, restore: sessions among others."""

from __future__ import annotations

from typing import Any

import msgspec

from .base import _Params, _Result, _SessionRef


class ForkParams(_Params):
    sessionId: str
    entryId: str | None = None
    cwd: str | None = None


class ForkResult(_Result):
    sessionId: str
    path: str
    persisted: bool


class ListParams(_Params):
    cwd: str | None = None
    all: bool = False
    limit: int | None = 50  # 1-1000 (null: the same 50, operations.results.DEFAULT_LIST_LIMIT)
    cursor: str | None = None
    query: str | None = None
    includeArchived: bool = False


class SessionTokens(_Result):
    # Sum of the tokens every assistant message of the file reported (its usage's totalTokens, else
    # input + output + cacheRead + cacheWrite; aborted and errored replies left out): what the session cost.
    total: int
    # What the last such message reported: about the size of the context at that point. 0 when none reported.
    last: int


class SessionInfo(_Result):
    """A session as session/list gives it: a superset of ACP's SessionInfo (sessionId, cwd, title, updatedAt, _meta)."""

    sessionId: str
    path: str
    cwd: str
    created: str
    modified: str
    messageCount: int
    firstMessage: str
    archived: bool
    # Token usage the assistant messages reported, over the whole file (every branch).
    tokens: SessionTokens
    # Its name as the tool of its compatibility reads it (pi: its last session_info; oh-my-pi, or a file
    # that starts with oh-my-pi's title line: that line's title, else the header's), as session/open answers it.
    name: str | None = None
    # The same (ACP's SessionInfo.title).
    title: str | None = None
    parentSession: str | None = None
    # With a query: the first matching message text around the match, marked **like this**.
    snippet: str | None = None
    # An in-memory session of this sidecar (created with persist: false); its path is "".
    inMemory: bool = False
    # ACP's name for ``modified`` (ISO 8601).
    updatedAt: str | None = None
    # ACP's extension slot, reserved (ACP clients must ignore what they do not know).
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ListResult(_Result):
    sessions: list[SessionInfo]
    nextCursor: str | None


class ArchiveParams(_SessionRef):
    pass


class ArchiveResult(_Result):
    sessionId: str
    path: str
    archived: bool


class DeleteParams(_SessionRef):
    pass


class DeleteResult(_Result):
    sessionId: str
    trashPath: str | None


class RestoreParams(_SessionRef):
    pass


class RestoreResult(_Result):
    sessionId: str
    path: str
