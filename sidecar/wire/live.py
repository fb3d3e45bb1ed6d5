"""Live sessions: subscriptions and roles (socket mode)."""

from __future__ import annotations

from .base import _Params, _Result, _SessionRef


class SubscribeParams(_Params):
    sessionId: str
    # The cursor of the last event received: what came after it is sent first (no gap, no
    # duplicate), or ``resync`` is answered when the backlog no longer reaches back that far.
    since: str | None = None


class SubscribeResult(_Result):
    # The position now: events after it follow as notifications (missed ones may come just before this answer).
    cursor: str
    leafId: str | None
    entryCount: int
    # ``since`` is older than the backlog, or from another process: read the session again.
    resync: bool = False
    # Events after ``since`` sent again.
    missed: int = 0
    # Whether this client controls the session (may write it).
    controller: bool = False


class UnsubscribeParams(_SessionRef):
    pass


class UnsubscribeResult(_Result):
    # False: the client was not subscribed.
    unsubscribed: bool


class TakeControlParams(_SessionRef):
    pass


class TakeControlResult(_Result):
    sessionId: str
    # Another client controlled it and was told (session/didLoseControl).
    tookOver: bool


class DidChangeLeafParams(_Result):
    """Notification ``session/didChangeLeaf``: the leaf moved without an append (session/branch)."""

    sessionId: str
    cursor: str
    leafId: str | None


class DidSetLabelParams(_Result):
    """Notification ``session/didSetLabel``: a label entry (in the didAppend just before) set or cleared a label."""

    sessionId: str
    cursor: str
    entryId: str
    targetId: str
    label: str | None = None


class DidSetNameParams(_Result):
    """Notification ``session/didSetName``: the session was named (the entry is in the didAppend just before)."""

    sessionId: str
    cursor: str
    entryId: str
    name: str | None


class DidCloseParams(_Result):
    """Notification ``session/didClose``: the session was closed by this sidecar; the subscription ends."""

    sessionId: str
    cursor: str


class ResyncParams(_Result):
    """Notification ``session/resync``: events were lost (a slow reader past the backlog, or the file was
    rewritten); read the session again (getEntries / buildContext), events go on from ``cursor``."""

    sessionId: str
    cursor: str
    # "backlog" or a reload reason (see ExternalChange.reloaded).
    reason: str


class DidLoseControlParams(_Result):
    """Notification ``session/didLoseControl``: another client took control of a session this client controlled."""

    sessionId: str
