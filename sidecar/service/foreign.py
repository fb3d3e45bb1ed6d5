"""Foreign sessions: another tool's transcript lines appended a batch at a time and read back verbatim
(``session/appendForeign``, ``loadForeign``, ``listForeign``, ``deleteForeign``; the Claude Agent SDK's
``SessionStore``), each a real sidecar session mapped as the importer maps a transcript
(importers/claude_code_store.py).

The sidecar session of a foreign key is named from it (``wire.foreign_session_id``: ``cc`` and 12 hex
of the format and ``projectKey``, then ``-`` and the tool's session id when that is a valid session id,
else ``_`` and a hash of it; the header's ``foreign`` names the key either way). So a project's sessions
are found in the listing by their ids' prefix, and the same key finds the same session in every process.

The mapping's state for a session is kept here between calls and rebuilt from its stored entries when
this process has not seen the session or someone else appended to it. A foreign call's params answer
``sessionId`` with that id, so the rpc layer runs it in that session's turn like any call on the
session; a lock per session here keeps it so for callers of the service that do not queue.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .. import wire
from ..errors import InvalidParams, SessionNotFound
from ..format.entry import Entry
from ..importers.claude_code_store import Transcripts, lines_of, stamp_now
from ..operations.appending import Appending
from ..store import ListQuery, Session, SessionStore
from ..work import NO_WORK

_PAGE = 1000


class ForeignSessions:
    """The foreign methods over the store and the append operation."""

    def __init__(self, store: SessionStore, appending: Appending, trash: Callable[[str], object]) -> None:
        self.store = store
        self.appending = appending
        self.trash = trash
        self._states: dict[str, Transcripts] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, session_id: str) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(session_id)
            if lock is None:
                lock = self._locks[session_id] = threading.Lock()
            return lock

    def _session(self, session_id: str) -> Session | None:
        try:
            return self.store.live(session_id)[0]
        except SessionNotFound:
            self._states.pop(session_id, None)
            return None

    def _state(self, session: Session) -> Transcripts:
        state = self._states.get(session.id)
        if state is None or state.entry_count != session.entry_count:
            state = self._states[session.id] = Transcripts.of_entries(e.obj() for e in session.tree.entries)
        return state

    # -- the methods ---------------------------------------------------------------------------

    def append(self, params: wire.AppendForeignParams) -> wire.AppendForeignResult:
        _check_key(params.projectKey, params.foreignSessionId, params.subpath)
        session_id = params.sessionId
        if params.cwd is not None and (not os.path.isabs(params.cwd) or "\x00" in params.cwd):
            raise InvalidParams(f"cwd must be an absolute path, not {params.cwd!r}", field="cwd")
        with self._lock(session_id):
            session = self._session(session_id)
            state = self._state(session) if session is not None else Transcripts()
            stamp = stamp_now()
            entries, kept = state.map_batch(params.subpath, params.lines, stamp, params.state)
            skipped = len(params.lines) - kept
            if not entries:
                return wire.AppendForeignResult(sessionId=session_id, appended=0, skipped=skipped, created=False)
            try:
                if session is None:
                    self._create(session_id, params, entries)
                    # (the state's count is the entries written: the next call finds it current)
                else:
                    self.appending.append(wire.AppendParams(sessionId=session_id, entries=entries))
            except BaseException:
                self._states.pop(session_id, None)  # rebuilt from what was written
                raise
            self._states[session_id] = state
            return wire.AppendForeignResult(
                sessionId=session_id, appended=kept, skipped=skipped, created=session is None
            )

    def _create(self, session_id: str, params: wire.AppendForeignParams, entries: list[dict[str, Any]]) -> None:
        cwd = params.cwd
        if cwd is None:
            first = next((line.get("cwd") for line in params.lines if isinstance(line.get("cwd"), str)), None)
            cwd = first if isinstance(first, str) and os.path.isabs(first) and "\x00" not in first else "/"
        session = self.store.create(cwd, session_id, None, True)
        foreign = {"format": params.format, "projectKey": params.projectKey, "sessionId": params.foreignSessionId}
        # (the header is not written yet: the file is made with the first batch, just below)
        session.header = Entry.from_obj({**session.header.obj(), "foreign": foreign})
        self.appending.append(wire.AppendParams(sessionId=session_id, entries=entries))
        session.write_now()  # kept even when the lines hold no conversation (pi would wait for one)

    def load(self, params: wire.LoadForeignParams) -> wire.LoadForeignResult:
        _check_key(params.projectKey, params.foreignSessionId, params.subpath)
        session_id = params.sessionId
        with self._lock(session_id):
            session = self._session(session_id)
            if session is None:
                return wire.LoadForeignResult(sessionId=None, lines=None)
            lines = lines_of(_own_entries(session), params.subpath)
            state = self._state(session)
            if lines is None and params.subpath is None:
                # Only subagent lines: the session is there, its main transcript is not.
                return wire.LoadForeignResult(sessionId=None, lines=None, subpaths=state.subpaths())
            return wire.LoadForeignResult(
                sessionId=session_id if lines is not None else None,
                lines=lines,
                state=state.state if params.subpath is None else None,
                mtime=state.stored_ms,
                subpaths=state.subpaths() if params.subpath is None else [],
            )

    def list(self, params: wire.ListForeignParams) -> wire.ListForeignResult:
        prefix = wire.foreign_prefix(params.format, params.projectKey)
        found: list[wire.ForeignSession] = []
        for session_id in self._listed(prefix):
            with self._lock(session_id):
                session = self._session(session_id)
                if session is None:
                    continue
                foreign = session.header_obj().get("foreign") or {}
                if foreign.get("projectKey") != params.projectKey or foreign.get("format") != params.format:
                    continue
                state = self._state(session)
                if not state.main.count:
                    continue  # only subagent lines (the SDK lists main transcripts)
                found.append(
                    wire.ForeignSession(
                        foreignSessionId=str(foreign.get("sessionId")),
                        sessionId=session_id,
                        mtime=state.stored_ms,
                        subpaths=state.subpaths(),
                        state=state.state,
                    )
                )
        return wire.ListForeignResult(sessions=found)

    def _listed(self, prefix: str) -> Iterator[str]:
        after = None
        while True:
            page = self.store.list(ListQuery(None, True, False, None, _PAGE, after), NO_WORK)
            for listed in page.sessions:
                if listed.session_id.startswith(prefix) and listed.session_id[len(prefix) : len(prefix) + 1] in "-_":
                    yield listed.session_id
            if page.next_cursor is None:
                return
            after = self.store.decode_cursor(page.next_cursor)

    def delete(self, params: wire.DeleteForeignParams) -> wire.DeleteForeignResult:
        _check_key(params.projectKey, params.foreignSessionId, params.subpath)
        session_id = params.sessionId
        with self._lock(session_id):
            session = self._session(session_id)
            if session is None:
                return wire.DeleteForeignResult(sessionId=None)
            if params.subpath is None:
                self._states.pop(session_id, None)
                self.trash(session_id)
                return wire.DeleteForeignResult(sessionId=session_id)
            state = self._state(session)
            entries = state.deleted(params.subpath, stamp_now())
            if entries:
                try:
                    self.appending.append(wire.AppendParams(sessionId=session_id, entries=entries))
                except BaseException:
                    self._states.pop(session_id, None)
                    raise
            return wire.DeleteForeignResult(sessionId=session_id)


def _own_entries(session: Session) -> Iterator[dict[str, Any]]:
    """The session's custom entries this mapping wrote, decoded (the rest are not read)."""
    for entry in session.tree.entries:
        if entry.type == "custom":
            raw = entry.raw
            if b'"claude-code.' in raw:
                yield entry.obj()


def _check_key(project_key: str, foreign_id: str, subpath: str | None) -> None:
    if not foreign_id:
        raise InvalidParams("foreignSessionId must not be empty", field="foreignSessionId")
    if subpath is not None and not subpath:
        raise InvalidParams("subpath must not be empty: leave it out for the main transcript", field="subpath")
    if "\0" in project_key or "\0" in foreign_id:
        raise InvalidParams("projectKey and foreignSessionId may not hold NUL", field="projectKey")
