"""What every call stands on: the store chosen by the settings, the store's hooks, the
compactor (loaded on first use), what the rpc layer asks before and after a call, and opening
and closing sessions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import external, wire
from ..config import Settings
from ..errors import InvalidParams
from ..format.jsstr import session_name
from ..history import PromptHistory
from ..operations.appending import Appending
from ..operations.cached import context_for_cache
from ..operations.results import open_result
from ..store.base import Durability
from ..store.files import FileStore
from ..store.follow import FileChange
from ..store.index import INDEX_DIR
from ..store.session import Session
from ..store.terminals import Breadcrumbs, check_terminal_id
from ..snapshots.engine import Snapshots

if TYPE_CHECKING:
    # Imported when the compactor is first used (the rpc layer wires its hooks
    # just after answering initialize): making a service does not load the
    # compaction engine, so initialize's answer does not wait for it.
    from ..compaction.coordinator import Compactor


class ServiceCore:
    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.store: Any
        if settings.store.databaseUrl and settings.store.format == "spec":
            raise InvalidParams("store.format \"spec\" keeps sessions in folders below the root; it cannot be combined "
                                "with store.databaseUrl (PostgreSQL holds pi-format sessions): drop one of the two",
                                field="store.format")
        if settings.store.databaseUrl:  # every session in PostgreSQL (store/postgres/)
            from ..store.postgres.opening import postgres_store

            self.store = postgres_store(root, settings)
        elif settings.store.format == "spec":  # the session spec's folders (store/spec/)
            self.store = _spec_store(root, settings)
        else:
            self.store = FileStore(root, settings, context_for_cache)
        # session/append: the tally carried from append to append, clearing, the compaction trigger.
        self.appending = Appending(self.store, self._compaction_due)
        # Results only go on the wire (the rpc server sets this): JSON kept from
        # an earlier answer may be sent as is, without decoding it first.
        self.raw_results = False
        self._compactor: Compactor | None = None
        self._compactor_lock = threading.Lock()
        # Wires a new compactor's client hooks (the rpc layer sets it): the engine loads on first use.
        self.on_compactor: Callable[[Compactor], None] | None = None
        # Prompts the user typed, across sessions (history/*), beside the listing index.
        self.history = PromptHistory(self.store.root / INDEX_DIR)
        # The session each terminal used last (continueRecent with terminalId).
        self.breadcrumbs = Breadcrumbs(self.store.root)
        # Sessions whose clients asked to hear of another program's writes (open/create ``watch``).
        self.watches = external.Watches(self.store.root)
        # Sends a notification to the clients (the rpc server sets it; any thread may call it).
        self.notify: Callable[[str, Any], None] | None = None
        # Snapshots of sessions' folders and rewinds (sidecar/snapshots/).
        self.snapshots = Snapshots(self.store.root)
        self.store.on_change = self._changed
        self.store.on_append = self._appended
        self.store.on_release = self._released
        self.store.redact_entry = redact_on_append  # used when store.redactOnAppend is on

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def settings(self) -> Settings:
        """The settings in effect (with the values the store settled, such as its compatibility)."""
        return self.store.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.store.settings = settings

    @property
    def compactor(self) -> Compactor:
        """Compaction runs, shared per session; the rpc layer wires its client hooks. Made on first use."""
        compactor = self._compactor
        if compactor is None:
            with self._compactor_lock:
                if self._compactor is None:
                    if self.settings.store.format == "spec":  # the spec's own algorithm and prompts
                        from ..compaction.spec import SpecCompactor as engine
                    else:
                        from ..compaction.coordinator import Compactor as engine
                    compactor = engine(lambda: self.settings.providers)
                    if self.on_compactor is not None:
                        self.on_compactor(compactor)
                    self._compactor = compactor
                compactor = self._compactor
        return compactor

    def _compaction_due(self, session_id: str, tokens: int) -> None:
        self.compactor.after_append(session_id, tokens, True, self.settings.compaction.autoCompact)

    # -- what the rpc layer asks before and after a call ------------------------------

    def is_open(self, session_id: str, turn: int | None = None) -> bool:
        """The session is in memory (calls on it need no file to be read); ``turn``: see ``SessionStore.is_current``."""
        return self.store.is_current(session_id, turn)

    def append_syncs(self, params: wire.AppendParams) -> bool:
        """This append would wait for the disk (an fsync, or the file's creation)."""
        return self.store.append_syncs(params.sessionId, _MessageRoles(params.entries))

    def durability_of(self, session_id: str) -> Durability | None:
        """Where the appends of open session ``session_id`` become durable (for a group sync of deferred appends)."""
        return self.store.durability_of(session_id)

    def upkeep_held(self, held: list[Any]) -> Any:
        return self.store.upkeep_held(held)

    def run_upkeep(self, held: list[Any]) -> None:
        self.store.run_upkeep(held)

    def reindex(self) -> int:
        return self.store.reindex()

    # -- sessions -----------------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        """An open session (opened when it is not); see ``SessionStore.live``."""
        return self.store.live(session_id)[0]

    def follow(self, session_id: str) -> None:
        """Catch an open session up with its file now (the rpc layer's watch calls this in the session's turn)."""
        session = self.store.held(session_id)
        if session is not None and session.writer.error is None:
            self.store.follow(session, wait=False)

    def changed_behind(self, session_id: str) -> bool:
        """The open session's file is not as the session last saw it (one stat)."""
        session = self.store.held(session_id)
        return session is not None and session.changed_behind()

    def _changed(self, session: Session, change: FileChange) -> None:
        """Another program changed the session and it caught up: the tally and watchers follow."""
        self.appending.forget(session)
        self._live_followed(session, change)
        notify = self.notify
        if notify is not None and session.id in self.watches:
            for method, params in external.notifications(session, change, self.store.blobs):
                notify(method, params)

    def _appended(self, session: Session) -> None:
        self._live_appended(session)
        if self.watches:
            self.watches.arm(session)  # a watched session's file may just have been made

    def _set_watch(self, session: Session, watch: bool) -> None:
        if watch:
            self.watches.add(session)
        else:
            self.watches.remove(session.id)

    def _remember_terminal(self, terminal_id: str | None, session: Session) -> None:
        if terminal_id is not None and not session.in_memory:
            self.breadcrumbs.remember(terminal_id, session.header_obj().get("cwd", ""), self.store.location(session))

    def create(self, params: wire.CreateParams) -> wire.CreateResult:
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
        session = self.store.create(params.cwd, params.sessionId, params.parentSession, params.persist,
                                    **self._origin_of(params))
        self._set_watch(session, params.watch)
        if params.name is not None and session_name(params.name):
            session.set_name(params.name)
        if params.terminalId is not None and params.persist:
            self.breadcrumbs.remember(params.terminalId, params.cwd, self.store.location(session))
        return wire.CreateResult(sessionId=session.id, path=self.store.location(session), header=session.header_obj())

    def open(self, params: wire.OpenParams) -> wire.OpenResult:
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
        if (params.sessionId is None) == (params.path is None):
            raise InvalidParams("session/open takes exactly one of sessionId and path")
        session, report = self.store.open(params.sessionId, params.path, params.readOnly)
        self._set_watch(session, params.watch)
        self._remember_terminal(params.terminalId, session)
        return open_result(session, self.store.location(session), report.parse_errors, report.migrated_from)

    def continue_recent(self, params: wire.ContinueRecentParams) -> wire.OpenResult | None:
        last_used = None
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
            last_used = self.breadcrumbs.recall(params.terminalId, params.cwd)
        for session, report, preferred in self.store.recent(params.cwd, last_used):
            if not preferred:
                self._remember_terminal(params.terminalId, session)
            return open_result(session, self.store.location(session), report.parse_errors, report.migrated_from)
        return None

    def close(self, params: wire.CloseParams) -> None:
        session = self.store.release(params.sessionId)
        self._released(session.id)

    def close_all(self) -> None:
        """Flush and close every open session (shutdown, EOF)."""
        self.watches.close()
        self.store.close_all()
        self.history.close()

    def flush(self, params: wire.FlushParams) -> wire.FlushResult:
        session = self.session(params.sessionId)
        session.flush()
        return wire.FlushResult(persisted=session.persisted)


def redact_on_append(obj: dict[str, Any]) -> dict[str, Any]:
    """store.redactOnAppend: one entry with its secrets replaced (numbered within the entry)."""
    from ..export.redact import Redactor

    return Redactor().value(obj)


def _spec_store(root: Path, settings: Settings) -> Any:
    from ..store.spec.store import SpecStore

    return SpecStore(root, settings)


class _MessageRoles(AbstractSet[Any]):
    """The roles of an append's messages, gathered only if the store asks (``roles & {...}``,
    ``"assistant" in roles``): under most fsync policies it need not look at the entries."""

    __slots__ = ("_entries", "_roles")

    def __init__(self, entries: list[Any]) -> None:
        self._entries, self._roles = entries, None

    def _gathered(self) -> set[Any]:
        if self._roles is None:
            self._roles = {
                e["message"].get("role")
                for e in self._entries
                if isinstance(e, dict) and e.get("type") == "message" and isinstance(e.get("message"), dict)
            }
        return self._roles

    def __contains__(self, role: object) -> bool:
        return role in self._gathered()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._gathered())

    def __len__(self) -> int:
        return len(self._gathered())

    def __and__(self, other: AbstractSet[Any]) -> set[Any]:  # type: ignore[override]
        return self._gathered() & set(other)
