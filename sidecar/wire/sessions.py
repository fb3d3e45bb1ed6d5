"""Create, open, continueRecent, close, flush, move: a session held, and where it is."""

from __future__ import annotations

from typing import Any, Literal

from .base import _Params, _Result, _SessionRef


class CreateParams(_Params):
    cwd: str
    sessionId: str | None = None
    name: str | None = None
    parentSession: str | None = None
    # false: an in-memory session that never touches the disk (subagents, tests,
    # previews); every method works on it, a fork of it is written as usual.
    persist: bool = True
    # The terminal it is used from: continueRecent with the same id resumes it.
    terminalId: str | None = None
    # Send session/didAppend and session/didReload when another program writes the file.
    watch: bool = False
    # A spec-format root only (store.format "spec"): what started the session, kept in its
    # metadata.json; cronJobId implies source "cron".
    source: Literal["interactive", "cron"] | None = None
    cronJobId: str | None = None


class CreateResult(_Result):
    sessionId: str
    path: str
    header: dict[str, Any]


class OpenParams(_Params):
    """Name the session by ``sessionId`` (looked up below the root) or by ``path``."""

    sessionId: str | None = None
    path: str | None = None
    # Read without taking the session's lock (another sidecar may be writing it);
    # every write to a session opened so is refused.
    readOnly: bool = False
    # The terminal it is used from: continueRecent with the same id resumes it.
    terminalId: str | None = None
    # Send session/didAppend and session/didReload when another program (pi's own CLI,
    # say) writes the file while it is open. Opening again without it stops them.
    watch: bool = False


class OpenWarning(_Result):
    """Something opening found wrong with the file that did not stop it from opening.

    ``kind`` ``"danglingParent"``: these entries name a parent that is not in the
    file, so the path to each stops there and the history before it is not in
    the context; ``session-sidecar doctor --fix`` reconnects them.
    """

    kind: str
    message: str
    entryIds: list[str] = []


class OpenResult(_Result):
    sessionId: str
    path: str
    header: dict[str, Any]
    leafId: str | None
    entryCount: int
    parseErrors: int
    persisted: bool
    migratedFrom: int | None = None
    warnings: list[OpenWarning] = []
    # What is wrong with the line before the header (oh-my-pi's title slot), if
    # anything: damaged, of the wrong width, or missing under oh-my-pi's
    # compatibility. The rest of the file opened as usual.
    titleFault: str | None = None
    # The session's name as the tool of its compatibility reads it (pi: its last session_info;
    # oh-my-pi: its title line, else the header's title), as session/list answers it.
    name: str | None = None
    # The same (ACP's SessionInfo.title).
    title: str | None = None


class ContinueRecentParams(_Params):
    cwd: str
    # Prefer the session this terminal used last in ``cwd`` over the newest one.
    terminalId: str | None = None


class MoveParams(_Params):
    sessionId: str
    # The project folder the session belongs to from now on (absolute).
    cwd: str


class MoveResult(_Result):
    sessionId: str
    path: str


class CloseParams(_SessionRef):
    pass


class FlushParams(_SessionRef):
    pass


class FlushResult(_Result):
    persisted: bool
