"""Another tool's transcripts kept as sidecar sessions, a batch of its lines at a time (the Claude Agent
SDK's ``SessionStore``): appendForeign, loadForeign, listForeign, deleteForeign.

A foreign session is named by the tool's own key: ``projectKey`` (the caller's scope) and
``foreignSessionId``; ``subpath`` names a transcript kept with it (a subagent's). The sidecar session
standing for it is answered as ``sessionId``: a real session (list, buildContext, export, fork...).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from .base import _Params, _Result

ForeignFormat = Literal["claude-code"]

# A session id (store/ids.py's rule): 1-64 characters, letters and digits at both ends, ".", "_", "-" inside.
_SESSION_ID = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")


def foreign_prefix(fmt: str, project_key: str) -> str:
    """The ids of a project's foreign sessions start so: ``cc`` and 12 hex digits of the format and key."""
    import hashlib  # (here: the wire's types load at every start, OpenSSL's hashes for a foreign call)

    return "cc" + hashlib.sha1(f"{fmt}\0{project_key}".encode("utf-8", "surrogatepass")).hexdigest()[:12]


def foreign_session_id(fmt: str, project_key: str, foreign_id: str) -> str:
    """The sidecar session standing for a foreign key (PROTOCOL.md, Foreign sessions)."""
    direct = f"{foreign_prefix(fmt, project_key)}-{foreign_id}"
    if _SESSION_ID.fullmatch(direct):
        return direct
    import hashlib

    return f"{foreign_prefix(fmt, project_key)}_{hashlib.sha1(foreign_id.encode('utf-8', 'surrogatepass')).hexdigest()}"


class _ForeignKey(_Params):
    format: ForeignFormat
    projectKey: str
    foreignSessionId: str

    @property
    def sessionId(self) -> str:
        """The session the call works on: the rpc layer runs it in that session's turn, as any call on it."""
        return foreign_session_id(self.format, self.projectKey, self.foreignSessionId)


class AppendForeignParams(_ForeignKey):
    # Transcript lines as the tool writes them (Claude Code: one JSON object a line); each is kept
    # verbatim and mapped into pi entries. A line whose ``uuid`` this transcript holds is skipped.
    lines: list[dict[str, Any]]
    # A transcript kept with the session (e.g. "subagents/agent-<id>"); absent: the main one.
    subpath: str | None = None
    # The new session's working folder (absolute); absent: the first line's "cwd", else "/".
    cwd: str | None = None
    # The client's own state for this session, kept verbatim; the latest given is answered by
    # loadForeign and listForeign (the Claude Agent SDK's session summary). Main transcript only.
    state: dict[str, Any] | None = None


class AppendForeignResult(_Result):
    sessionId: str
    # Lines kept (new), and lines skipped (their uuid was there already).
    appended: int
    skipped: int
    # The sidecar session was made by this call.
    created: bool


class LoadForeignParams(_ForeignKey):
    subpath: str | None = None


class LoadForeignResult(_Result):
    # null: no such session (or nothing kept under that subpath).
    sessionId: str | None
    lines: list[dict[str, Any]] | None
    state: dict[str, Any] | None = None
    # When a line was kept last (epoch ms); 0 when none.
    mtime: int = 0
    # The session's subpaths holding lines (with the main transcript only).
    subpaths: list[str] = []


class ListForeignParams(_Params):
    format: ForeignFormat
    projectKey: str


class ForeignSession(_Result):
    foreignSessionId: str
    sessionId: str
    # When a line was kept last (epoch ms: storage time, not the lines' own).
    mtime: int
    # The subpaths holding lines.
    subpaths: list[str]
    state: dict[str, Any] | None = None


class ListForeignResult(_Result):
    sessions: list[ForeignSession]


class DeleteForeignParams(_ForeignKey):
    # Absent: the whole session goes to the trash (its subpaths with it); else only that subpath's lines
    # are gone from loadForeign (they stay in the tree, after a claude-code.deleted entry).
    subpath: str | None = None


class DeleteForeignResult(_Result):
    # null: there was no such session.
    sessionId: str | None
