"""The operations the protocol exposes, independent of any transport.

Each public method takes the params Struct of one protocol method and returns
its result Struct (see ``sidecar.wire``); errors are ``SidecarError`` values
with stable codes. The service is synchronous and thread-safe for calls on
different sessions; callers serialize calls on one session (the rpc layer
does, with a queue per session).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

import msgspec

from . import external, wire
from .config import Settings
from .context.build import build_context
from .context import omp as omp_context
from .context.delta import make_cursor, since_base
from .context.llm import convert_to_llm
from .context.tally import TokenTally
from .context.tokens import context_tokens
from .errors import (
    DamagedFile,
    InvalidParams,
    InvalidState,
    SessionExists,
    SessionNotFound,
    SidecarError,
    StorageError,
)
from .format.jsonl import Entry, LineMoved, encode
from .format.jsstr import session_name
from .history import MAX_PROMPT_CHARS, HistoryUnavailable, Prompt, PromptHistory
from .store.layout import ARCHIVE_DIR, TRASH_DIR, Layout, check_session_id, iso_now, new_session_id
from .store.index import INDEX_DIR, IndexUnavailable, ListingIndex
from .upkeep.report import retention_policy, stats_result
from .upkeep.retention import select
from .upkeep.usage import measure, session_files
from .store.listing import (
    SummaryCache, decode_cursor, encode_cursor, encode_cursor_of, iso_from_ms, matches, sort_key, summarize,
)
from .store.lock import lock_path, unlock
from .store.compat import Compat, omp_blob_folder, root_compat, session_compat, tool_of_folder
from .store.follow import FileChange
from .live.events import LiveSessions
from .store.move import relocate, rewrite_header_cwd
from .store.pathcopy import connected_path, label_timestamps
from .store.payload import BLOB_DIR, BlobStore, resolve
from .store.titles import fork_prefix, new_file_prefix
from .store.session import UNSET, LoadReport, Session
from .store import treecache
from .store.terminals import Breadcrumbs, check_terminal_id
from .store.writer import FsyncPolicy, SessionWriter
from .work import NO_WORK, Work
from .snapshots.engine import Snapshots

if TYPE_CHECKING:
    # Imported when the compactor is first used (the rpc layer wires its hooks
    # just after answering initialize): making a service does not load the
    # compaction engine, so initialize's answer does not wait for it.
    from .compaction.coordinator import Compactor
    from .compaction.run import CompactionOptions

_UNKNOWN: Any = object()
# A batch written to a file, waiting to be folded into the listing index: (path, area, lines).
Upkeep = tuple[Path, str, list[bytes]]

DEFAULT_LIST_LIMIT = 50


def _blob_store(root: Path, compat: Compat) -> BlobStore:
    """Where images are stored (oh-my-pi's compatibility) and looked up (always, for files written before)."""
    ours, omps = root / BLOB_DIR, omp_blob_folder(root)
    if compat == "omp":
        return BlobStore(root, omps, also_read=(ours,))
    return BlobStore(root, also_read=(omps,) if tool_of_folder(root) == "omp" else ())


def _cursor_kind(fmt: str, rules: str) -> str:
    """What a cursor was made for: a context of another format or other rules is not a base for a delta."""
    return fmt if rules == "pi" else f"{fmt}/{rules}"


def _missing_title(session: Session) -> str | None:
    """oh-my-pi's files start with a title line; one under its compatibility without it is reported."""
    if session.compat == "omp" and not session.prefix and session.persisted:
        return "the file has no title line (oh-my-pi adds one at its next rename); its name is the header's title"
    return None
MAX_LIST_LIMIT = 1000


class SessionService:
    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        self.layout = Layout(root)
        self.settings = settings or Settings()
        self._open: dict[str, Session] = {}
        # The tool the files must stay readable by (store/compat.py): where images and names go.
        self.compat: Compat = root_compat(self.layout.root, self.settings.store.compat)
        if self.settings.store.compat is None:  # the effective value, as initialize answers it
            store = msgspec.structs.replace(self.settings.store, compat=self.compat)
            self.settings = msgspec.structs.replace(self.settings, store=store)
        self.blobs = _blob_store(self.layout.root, self.compat)
        self._lock = threading.RLock()
        self._summaries = SummaryCache()
        # What session/list returns, in sqlite beside the files, kept up to date by our own writes.
        self.index = ListingIndex(self.layout.root)
        # Context size per open session, carried from append to append (weak: a
        # closed session's tally goes with it).
        self._tallies: weakref.WeakKeyDictionary[Session, TokenTally] = weakref.WeakKeyDictionary()
        # Results only go on the wire (the rpc server sets this): JSON kept from
        # an earlier answer may be sent as is, without decoding it first.
        self.raw_results = False
        # The listed area of each file appended to (see _indexed).
        self._areas: dict[Path, str | None] = {}
        # Index upkeep held until an answer is out (upkeep_held), per thread.
        self._upkeep = threading.local()
        self._compactor: Compactor | None = None
        self._compactor_lock = threading.Lock()
        # Prompts the user typed, across sessions (history/*), beside the listing index.
        self.history = PromptHistory(self.layout.root / INDEX_DIR)
        # The session each terminal used last (continueRecent with terminalId).
        self.breadcrumbs = Breadcrumbs(self.layout.root)
        # Sessions whose clients asked to hear of another program's writes (open/create ``watch``).
        self.watches = external.Watches(self.layout.root)
        # Sends a notification to the clients (the rpc server sets it; any thread may call it).
        self.notify: Callable[[str, Any], None] | None = None
        # Snapshots of sessions' folders and rewinds (sidecar/snapshots/).
        self.snapshots = Snapshots(self.layout.root)

    @property
    def compactor(self) -> Compactor:
        """Compaction runs, shared per session; the rpc layer wires its client hooks. Made on first use."""
        compactor = self._compactor
        if compactor is None:
            with self._compactor_lock:
                if self._compactor is None:
                    from .compaction.coordinator import Compactor

                    self._compactor = Compactor(lambda: self.settings.providers)
                compactor = self._compactor
        return compactor

    @property
    def fsync_policy(self) -> FsyncPolicy:
        return FsyncPolicy(self.settings.store.fsync)

    # -- lookup -------------------------------------------------------------

    def is_open(self, session_id: str) -> bool:
        """The session is in memory (calls on it need no file to be read)."""
        with self._lock:
            session = self._open.get(session_id)
        return session is not None and session.writer.error is None and not session.changed_behind()

    def append_syncs(self, params: wire.AppendParams) -> bool:
        """This append would fsync or create the file (both can take milliseconds)."""
        with self._lock:
            session = self._open.get(params.sessionId)
        if session is None:
            return True
        roles = {
            e["message"].get("role")
            for e in params.entries
            if isinstance(e, dict) and e.get("type") == "message" and isinstance(e.get("message"), dict)
        }
        policy = session.writer.policy
        if not session.persisted:
            return bool(roles & {"user", "assistant"})  # the first user or assistant message creates the file
        if policy is FsyncPolicy.ASSISTANT:
            return "assistant" in roles
        return policy is FsyncPolicy.ALWAYS

    def session(self, session_id: str) -> Session:
        """An open session; a session on disk that is not open yet is opened.

        A session whose write failed answers every call with that error until
        it is opened again (session/open), so memory never runs ahead of disk.
        An open session first catches up with its file (another program may
        have written it: store/follow.py).
        """
        return self._live(session_id)[0]

    def _live(self, session_id: str, wait: bool = True) -> tuple[Session, FileChange | None]:
        """``session``, with what it found another program had done to its file (None: nothing)."""
        with self._lock:
            found = self._open.get(session_id)
        if found is not None:
            found.writer.check()
            return found, self._follow(found, wait)
        check_session_id(session_id)
        path = self.layout.find(session_id)
        if path is None:
            raise SessionNotFound(
                f"no session {session_id!r} below {self.layout.root}; create it, or check the id with session/list",
                sessionId=session_id,
            )
        return self._load(path)[0], None

    def _follow(self, session: Session, wait: bool = True) -> FileChange | None:
        session.on_follow = self._followed  # (a forked session is made without it)
        return session.follow(wait)  # what it found reaches _followed

    def _followed(self, session: Session, change: FileChange) -> None:
        """Another program changed the file and the session caught up: the index, the tally and watchers follow."""
        self._tallies.pop(session, None)
        self._live_followed(session, change)
        if change.reloaded is not None or change.header_changed:
            self._index_refresh(session.path)
        elif change.appended:
            self._indexed(session, change.appended)
        notify = self.notify
        if notify is not None and session.id in self.watches:
            for method, params in external.notifications(session, change, self.blobs):
                notify(method, params)

    def follow(self, session_id: str) -> None:
        """Catch an open session up with its file now (the rpc layer's watch calls this in the session's turn)."""
        with self._lock:
            session = self._open.get(session_id)
        if session is not None and session.writer.error is None:
            self._follow(session, wait=False)

    def changed_behind(self, session_id: str) -> bool:
        """The open session's file is not as the session last saw it (one stat)."""
        with self._lock:
            session = self._open.get(session_id)
        return session is not None and session.changed_behind()

    def _set_watch(self, session: Session, watch: bool) -> None:
        if watch:
            self.watches.add(session)
        else:
            self.watches.remove(session.id)

    def _load(self, path: Path, read_only: bool = False) -> tuple[Session, Any]:
        # Already open here: loading again would collide with our own lock.
        with self._lock:
            resolved = path.resolve()
            here = next((s for s in self._open.values() if s.path == path or s.path.resolve() == resolved), None)
            if here is not None and here.writer.error is None and (read_only or not here.read_only):
                return here, LoadReport(0, None)
            if here is not None:  # failed or read-only, and a writable one is asked for
                self._open.pop(here.id, None)
                here.close()
        try:
            session, report = Session.load(path, self.fsync_policy, read_only, cache_root=self.layout.root)
        except FileNotFoundError:
            raise SessionNotFound(f"no session file at {path}", path=str(path)) from None
        with self._lock:
            existing = self._open.get(session.id)
            if existing is not None:
                session.close()  # drops the lock this load took: the open one holds its own
                if existing.path.resolve() != path.resolve():
                    raise InvalidState(
                        f"a session with id {session.id} is already open from {existing.path}; close it first",
                        sessionId=session.id,
                        path=str(path),
                    )
                return existing, report
            session.on_append = self._indexed
            self._adopt(session)
            session.on_follow = self._followed
            self._open[session.id] = session
        return session, report

    def _adopt(self, session: Session) -> None:
        """Give a session its compatibility: images to the blob store only for oh-my-pi's."""
        session.compat = session_compat(session.path, self.layout.root, self.compat)
        session.blobs = self.blobs if session.compat == "omp" else None

    def _resolve_path(self, raw: str) -> Path:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.layout.root / path
        if not self.settings.store.allowExternalPaths:
            self.layout.check_inside(path)
        return path

    # -- create / open / close ---------------------------------------------

    def create(self, params: wire.CreateParams) -> wire.CreateResult:
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
        session_id = check_session_id(params.sessionId) if params.sessionId is not None else new_session_id()
        with self._lock:
            if session_id in self._open or self.layout.find(session_id) is not None:
                raise SessionExists(f"session {session_id} already exists; open it or pick another id", sessionId=session_id)
            timestamp = iso_now()
            path = self.layout.new_session_path(params.cwd, timestamp, session_id)
            prefix = new_file_prefix(timestamp) if session_compat(path, self.layout.root, self.compat) == "omp" else b""
            session = Session.new(
                path, session_id, params.cwd, self.fsync_policy, params.parentSession, timestamp, prefix
            )
            session.on_append = self._indexed
            self._adopt(session)
            session.on_follow = self._followed
            session.in_memory = not params.persist
            self._open[session_id] = session
        self._set_watch(session, params.watch)
        if params.name is not None and session_name(params.name):
            session.set_name(params.name)
        if params.terminalId is not None and params.persist:
            self.breadcrumbs.remember(params.terminalId, params.cwd, path)
        return wire.CreateResult(sessionId=session_id, path="" if session.in_memory else str(path),
                                 header=session.header_obj())

    def open(self, params: wire.OpenParams) -> wire.OpenResult:
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
        if (params.sessionId is None) == (params.path is None):
            raise InvalidParams("session/open takes exactly one of sessionId and path")
        if params.sessionId is not None:
            check_session_id(params.sessionId)
            with self._lock:
                session = self._open.get(params.sessionId)
            if session is not None and session.writer.error is None and (params.readOnly or not session.read_only):
                self._follow(session)
                self._set_watch(session, params.watch)
                self._remember_terminal(params.terminalId, session)
                return self._open_result(session, 0, None)
            if session is not None:  # its last write failed (or it was read-only): read the file again
                with self._lock:
                    self._open.pop(session.id, None)
                session.close()
            path = self.layout.find(params.sessionId)
            if path is None:
                raise SessionNotFound(f"no session {params.sessionId!r} below {self.layout.root}", sessionId=params.sessionId)
        else:
            path = self._resolve_path(params.path)  # type: ignore[arg-type]
            if not path.is_file():
                raise SessionNotFound(f"no session file at {path}", path=str(path))
        session, report = self._load(path, params.readOnly)
        self._set_watch(session, params.watch)
        self._remember_terminal(params.terminalId, session)
        return self._open_result(session, report.parse_errors, report.migrated_from)

    def _remember_terminal(self, terminal_id: str | None, session: Session) -> None:
        if terminal_id is not None and not session.in_memory:
            self.breadcrumbs.remember(terminal_id, session.header_obj().get("cwd", ""), session.path)

    def _open_result(self, session: Session, parse_errors: int, migrated_from: int | None) -> wire.OpenResult:
        return wire.OpenResult(
            sessionId=session.id,
            path="" if session.in_memory else str(session.path),
            header=session.header_obj(),
            leafId=session.leaf_id,
            entryCount=session.entry_count,
            parseErrors=parse_errors,
            persisted=session.persisted,
            migratedFrom=migrated_from,
            warnings=_open_warnings(session),
            titleFault=session.title_fault or _missing_title(session),
        )

    def continue_recent(self, params: wire.ContinueRecentParams) -> wire.OpenResult | None:
        if params.terminalId is not None:
            check_terminal_id(params.terminalId)
            last_used = self.breadcrumbs.recall(params.terminalId, params.cwd)
            if last_used is not None:
                try:
                    session, report = self._load(last_used)
                except (DamagedFile, SessionNotFound, InvalidState):
                    pass  # fall back to the newest of the cwd
                else:
                    return self._open_result(session, report.parse_errors, report.migrated_from)
        folder = self.layout.cwd_dir(params.cwd)
        candidates = []
        for path in self.layout.session_files(folder):
            try:
                candidates.append((path.stat().st_mtime_ns, path))
            except OSError:
                continue
        for _, path in sorted(candidates, reverse=True):
            try:
                session, report = self._load(path)
            except (DamagedFile, SessionNotFound, InvalidState):
                continue
            self._follow(session)  # (it may have been open already, and written by another program since)
            self._remember_terminal(params.terminalId, session)
            return self._open_result(session, report.parse_errors, report.migrated_from)
        return None

    def close(self, params: wire.CloseParams) -> None:
        session = self._require_open(params.sessionId)
        with self._lock:
            self._open.pop(session.id, None)
        self.watches.remove(session.id)
        self._save_tree_cache(session)
        session.close()
        self._live_closed(session.id)

    def close_all(self) -> None:
        """Flush and close every open session (shutdown, EOF)."""
        with self._lock:
            sessions = list(self._open.values())
            self._open.clear()
        self.watches.close()
        for session in sessions:
            self._save_tree_cache(session)
            session.close()
        self.history.close()

    def _save_tree_cache(self, session: Session) -> None:
        """Write the tree cache of a large session whose file changed since its cache (store/treecache.py)."""
        if not session.persisted or session.writer.error is not None or not session.tree_loaded:
            return
        try:
            stamp = treecache.FileStamp.of(os.stat(session.path))
            if stamp == session.cache_stamp or stamp.size < treecache.MIN_CACHED_BYTES:
                return
            if stamp.size != session.known_size:
                return  # lines we have not read (another writer), or a rewrite we did not lay out
            with open(session.path, "rb") as file:
                tail = treecache.sample_tail(file.fileno(), stamp.size)
                last = session.tree.entries[-1] if session.tree.entries else None
                if last is not None and os.pread(file.fileno(), last.length, last.offset) != last.raw:
                    return  # the file is not laid out as we think: leave it to a full parse
        except (OSError, LineMoved):
            return
        cached = treecache.build_cache(
            session.path, session.header, session.tree, session.parse_errors, session.writer.torn_tail_at,
            session.writer.needs_newline, stamp, tail, self._context_for_cache(session), session.prefix,
        )
        if cached is not None:
            treecache.write_cache(self.layout.root, cached)
            session.cache_stamp = stamp

    def _context_for_cache(self, session: Session) -> treecache.CachedContext | None:
        """The context at the leaf the next open will have (the last entry in the file), as buildContext answers it."""
        entries = session.tree.entries
        leaf = entries[-1].id if entries else None
        cached = session.cached_context
        if cached is not None and cached.leaf_id == leaf:
            return cached
        path = session.tree.path(leaf)
        if any(e.has_blobs for e in path):
            return None  # resolved images would bloat the cache; build such a context each time
        ctx = omp_context.build_context(path) if session.compat == "omp" else build_context(path)
        try:
            messages = encode(ctx.messages)
        except (TypeError, ValueError):
            return None
        return treecache.CachedContext.make(
            messages, leaf_id=leaf, thinking_level=ctx.thinking_level, model=ctx.model, models=ctx.models,
            mode=ctx.mode, mode_data=ctx.mode_data, injected_rules=ctx.injected_rules, entry_ids=ctx.entry_ids,
            estimated_tokens=context_tokens(ctx.messages, ctx.after_compaction),
        )

    def flush(self, params: wire.FlushParams) -> wire.FlushResult:
        session = self.session(params.sessionId)
        session.flush()
        return wire.FlushResult(persisted=session.persisted)

    def _require_open(self, session_id: str) -> Session:
        with self._lock:
            session = self._open.get(session_id)
        if session is None:
            check_session_id(session_id)
            raise SessionNotFound(f"session {session_id!r} is not open", sessionId=session_id)
        return session

    # -- append / context ----------------------------------------------------

    def append(self, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        """Append a batch. With ``defer_sync`` the fsync the policy asks for is
        left to ``sync_deferred`` (the caller must not answer before it)."""
        session, change = self._live(params.sessionId)
        if params.expectedLeafId is not msgspec.UNSET and params.expectedLeafId != session.leaf_id:
            raise external.session_changed(session, params.expectedLeafId, self.blobs)  # type: ignore[arg-type]
        parent = UNSET if params.parentId is msgspec.UNSET else params.parentId
        objs: list[dict[str, Any]] = []
        appended = session.append(params.entries, parent, defer_sync, objs)
        tokens = self._context_tokens(session, appended, objs)
        should_compact = self.should_compact(tokens)
        self.compactor.after_append(session.id, tokens, should_compact, self.settings.compaction.autoCompact)
        return wire.AppendResult(
            entries=[wire.AppendedEntry(id=e.id, parentId=e.parent_id, timestamp=e.timestamp) for e in appended],  # type: ignore[arg-type]
            leafId=session.leaf_id,
            contextTokens=tokens,
            shouldCompact=should_compact,
            external=external.result_field(change),
        )

    def writer_of(self, session_id: str) -> SessionWriter | None:
        """The writer of open session ``session_id`` (for a group fsync of its deferred appends)."""
        with self._lock:
            session = self._open.get(session_id)
        return session.writer if session is not None else None

    def should_compact(self, tokens: int) -> bool:
        settings = self.settings.compaction
        if not settings.enabled or settings.contextWindow is None:
            return False
        return tokens > settings.contextWindow - settings.reserveTokens

    def _context_tokens(self, session: Session, appended: list[Entry], objs: list[dict[str, Any]] | None = None) -> int:
        """The context size at the leaf, carried forward from the last append when the path just grew."""
        previous = self._tallies.get(session)
        tally = previous.extended(appended, objs) if previous is not None else None
        if tally is None:
            tally = TokenTally.of_path(session.tree.path(session.leaf_id))
        self._tallies[session] = tally
        return tally.total

    def build_context(self, params: wire.BuildContextParams) -> wire.BuildContextResult:
        session, change = self._live(params.sessionId)
        leaf = session.leaf_id if params.leafId is msgspec.UNSET else params.leafId
        rules = params.rules or session.compat
        cached = session.cached_context if rules == session.compat else None
        kept = _kept_messages(cached) if cached is not None and cached.leaf_id == leaf else None
        if kept is not None and params.format == "agent" and params.since is None:
            assert cached is not None
            # A path never changes once written (the file is append-only), so neither does its context.
            return wire.BuildContextResult(
                messages=msgspec.Raw(kept) if self.raw_results else _decode_json(bytes(kept)),  # type: ignore[arg-type]
                thinkingLevel=cached.thinking_level,
                model=cached.model,
                models=cached.models,
                mode=cached.mode,
                modeData=cached.mode_data,
                injectedRules=cached.injected_rules,
                leafId=leaf,  # type: ignore[arg-type]
                estimatedTokens=cached.estimated_tokens,
                entryIds=cached.entry_ids,
                cursor=make_cursor(session.id, leaf, cached.entry_ids, _cursor_kind(params.format, rules)),
                external=external.result_field(change),
            )
        path = session.path_to(leaf)  # type: ignore[arg-type]
        ctx = omp_context.build_context(path) if rules == "omp" else build_context(path)
        if any(e.has_blobs for e in path):
            resolve(ctx.messages, self.blobs)
        base, reason = 0, None
        kind = _cursor_kind(params.format, rules)
        if params.since is not None:
            base, reason = since_base(params.since, session.id, path, ctx.entry_ids, kind)
            if base and rules == "omp" and not omp_context.prefix_unchanged(ctx.messages, base):
                base, reason = 0, "changed"
        shown = ctx.messages[base:] if base else ctx.messages
        if params.format == "llm":
            messages = omp_context.convert_to_llm(shown) if rules == "omp" else convert_to_llm(shown)
        else:
            messages = shown
        return wire.BuildContextResult(
            messages=messages,
            thinkingLevel=ctx.thinking_level,
            model=ctx.model,
            models=ctx.models,
            mode=ctx.mode,
            modeData=ctx.mode_data,
            injectedRules=ctx.injected_rules,
            leafId=leaf,  # type: ignore[arg-type]
            estimatedTokens=context_tokens(ctx.messages, ctx.after_compaction),
            entryIds=ctx.entry_ids[base:] if base else ctx.entry_ids,
            cursor=make_cursor(session.id, leaf, ctx.entry_ids, kind),
            delta=params.since is not None and reason is None,
            baseCount=base,
            rebuildReason=reason,
            external=external.result_field(change),
        )

    # -- tree ------------------------------------------------------------------

    def branch(self, params: wire.BranchParams, work: Work = NO_WORK) -> wire.BranchResult:
        session = self.session(params.sessionId)
        if params.entryId is not None:
            session.get(params.entryId)
        if params.summarize and params.entryId != session.leaf_id:
            session.check_writable()  # before asking a model for a summary that could not be kept
            # Summarizing awaits a model: run it on this worker thread's own loop.
            summary = asyncio.run(
                self.compactor.branch_summary(
                    session, params.entryId, self._compaction_options(params), params.provider, work
                )
            )
            if summary is not None:
                written = session.append([summary], params.entryId)
                return wire.BranchResult(leafId=session.leaf_id, summaryEntryId=written[0].id)
        session.branch(params.entryId)
        self._live_leaf_moved(session)
        return wire.BranchResult(leafId=session.leaf_id)

    # -- compaction -------------------------------------------------------------

    def _compaction_options(self, params: Any) -> CompactionOptions:
        from .compaction.run import CompactionOptions

        settings = self.settings.compaction
        reserve = getattr(params, "reserveTokens", None)
        keep = getattr(params, "keepRecentTokens", None)
        return CompactionOptions(
            keep_recent_tokens=keep if keep is not None else settings.keepRecentTokens,
            reserve_tokens=reserve if reserve is not None else settings.reserveTokens,
            context_window=settings.contextWindow,
            custom_instructions=params.customInstructions,
            model=params.model,
            prune=settings.prune,
        )

    async def compact(self, params: wire.CompactParams, work: Work = NO_WORK, auto: bool = False) -> wire.CompactResult:
        """Summarize the older part of a path and append one ``compaction`` entry (async: it awaits a model).

        Progress goes to ``work`` (preparing, pruning, summarizing with the
        streamed token count, writing); a cancel at any point writes nothing.
        """
        session = self.session(params.sessionId)
        session.check_writable()  # before asking a model for a summary that could not be kept
        if params.leafId is not None:
            session.get(params.leafId)
        for name, value in (("reserveTokens", params.reserveTokens), ("keepRecentTokens", params.keepRecentTokens)):
            if value is not None and value < 0:
                raise InvalidParams(f"{name} must not be negative", field=name)
        record = await self.compactor.compact(
            session, params.leafId, self._compaction_options(params), params.provider, work, auto=auto
        )
        outcome = record.outcome
        return wire.CompactResult(
            entryId=record.entry_id,
            summary=outcome.summary,
            firstKeptEntryId=outcome.first_kept_entry_id,
            tokensBefore=outcome.tokens_before,
            tokensAfter=outcome.tokens_after,
            details=wire.CompactDetails(
                readFiles=outcome.read_files,
                modifiedFiles=outcome.modified_files,
                fallback=msgspec.convert(outcome.fallback, wire.CompactFallback) if outcome.fallback else None,
            ),
            provider=outcome.provider,
            model=outcome.model,
            durationMs=record.duration_ms,
        )

    async def auto_compact(self, session_id: str, work: Work = NO_WORK) -> wire.CompactResult:
        """The compaction autoCompact asks for (see ``Compactor.on_should_compact``)."""
        try:
            return await self.compact(wire.CompactParams(sessionId=session_id), work, auto=True)
        finally:
            self.compactor.auto_finished(session_id)

    def get_tree(self, params: wire.GetTreeParams) -> wire.GetTreeResult:
        session, change = self._live(params.sessionId)
        labels = session.tree.labels
        nodes = [
            wire.TreeNode(
                id=entry.id,  # type: ignore[arg-type]
                parentId=parent,
                type=entry.type,
                timestamp=entry.timestamp,
                role=entry.role() if entry.type == "message" else None,
                label=labels.get(entry.id),  # type: ignore[arg-type]
            )
            for entry, parent in session.tree.effective_parents()
        ]
        return wire.GetTreeResult(nodes=nodes, leafId=session.leaf_id, external=external.result_field(change))

    def get_entries(self, params: wire.GetEntriesParams) -> wire.GetEntriesResult:
        session = self.session(params.sessionId)
        if params.ids is None:
            entries = session.tree.entries
        else:
            entries = [session.get(entry_id) for entry_id in params.ids]
        return wire.GetEntriesResult(
            entries=[resolve(e.obj(), self.blobs) if e.has_blobs else e.obj() for e in entries]
        )

    def set_label(self, params: wire.SetLabelParams) -> wire.SetLabelResult:
        session = self.session(params.sessionId)
        entry = session.set_label(params.entryId, params.label)
        return wire.SetLabelResult(entryId=entry.id, leafId=session.leaf_id)  # type: ignore[arg-type]

    def set_name(self, params: wire.SetNameParams) -> wire.SetNameResult:
        session = self.session(params.sessionId)
        titled = session.prefix
        entry = session.set_name(params.name)
        if session.prefix != titled and session.persisted:
            self._index_refresh(session.path)  # the title line changed in place: read the file's row again
        return wire.SetNameResult(entryId=entry.id, name=session.name)  # type: ignore[arg-type]

    # -- fork ------------------------------------------------------------------

    def fork(self, params: wire.ForkParams) -> wire.ForkResult:
        """Copy the path root -> entry into a new session file, connected (store/pathcopy.py).

        Label entries on the path are dropped and the labels of the copied
        entries written again after them, so labels set on other branches
        (whose label entries are not on the path) are kept too.
        """
        source = self.session(params.sessionId)
        target_id = params.entryId if params.entryId is not None else source.leaf_id
        if target_id is None:
            raise InvalidState("the session is empty (or its leaf was reset); name an entryId to fork from")
        target = source.get(target_id)
        if params.entryId is not None and target.type == "message" and target.role() not in ("user", "assistant"):
            raise InvalidParams(
                f"fork from a user or assistant message; entry {target_id} is a {target.role()} message "
                "(forking there could leave a tool call without its result)",
                entryId=target_id,
            )
        copied = connected_path(source.tree.path(target_id), source.tree.labels, label_timestamps(source.tree.entries))
        cwd = params.cwd if params.cwd is not None else source.header_obj().get("cwd", "")
        new_id = new_session_id()
        timestamp = iso_now()
        new_path = self.layout.new_session_path(cwd, timestamp, new_id)
        omp = session_compat(new_path, self.layout.root, self.compat) == "omp"
        forked = Session.copied(
            new_path, new_id, cwd, self.fsync_policy, copied.entries, parent_session=source.id, timestamp=timestamp,
            prefix=fork_prefix(source, timestamp) if omp else b"",
        )
        if copied.labels:
            forked.append(copied.labels)
        forked.on_append = self._indexed
        if forked.persisted:
            self._index_refresh(forked.path)
        with self._lock:
            self._adopt(forked)
            self._open[new_id] = forked
        return wire.ForkResult(sessionId=new_id, path=str(new_path), persisted=forked.persisted)

    # -- listing index -----------------------------------------------------------

    def _area_of(self, path: Path) -> str | None:
        """The listed area a file is in ("" live, "archive"), None for the trash or outside the root."""
        try:
            parts = path.relative_to(self.layout.root).parts
        except ValueError:
            return None
        if len(parts) == 2 and not parts[0].startswith("."):
            return ""
        if len(parts) == 3 and parts[0] == ARCHIVE_DIR:
            return "archive"
        return None

    def _indexed(self, session: Session, entries: list[Entry]) -> None:
        """A batch reached the file: fold it into the index row in the same step."""
        self._live_appended(session)
        if self.watches:
            self.watches.arm(session)  # a watched session's file may just have been made
        # An open session's file does not move (archive, delete and restore close it first).
        area = self._areas.get(session.path, _UNKNOWN)
        if area is _UNKNOWN:
            area = self._areas[session.path] = self._area_of(session.path)
        if area is None:
            return
        held = getattr(self._upkeep, "held", None)
        if held is not None:
            held.append((session.path, area, [e.raw for e in entries]))
        else:
            self.index.appended(session.path, area, [e.raw for e in entries])

    @contextmanager
    def upkeep_held(self, held: list[Upkeep]) -> Iterator[None]:
        """Within this block, the listing-index upkeep of this thread's appends goes into ``held``,
        for the caller to run with ``run_upkeep`` once its answers are out.

        The index is a cache of the files (a failure there never fails a write), so an
        answer need not wait for it. The rpc layer runs what it held before it hands any
        other call a turn, so no call can see the index behind a write it follows.
        """
        self._upkeep.held = held
        try:
            yield
        finally:
            self._upkeep.held = None

    def run_upkeep(self, held: list[Upkeep]) -> None:
        """Fold held appends into the index: one step per file for a run of appends to it."""
        jobs = held[:]
        held.clear()
        start = 0
        while start < len(jobs):
            path, area, _ = jobs[start]
            end = start + 1
            while end < len(jobs) and jobs[end][0] == path:
                end += 1
            lines = [line for _, _, batch in jobs[start:end] for line in batch]
            self.index.appended(path, area, lines)
            start = end

    def _index_refresh(self, path: Path) -> None:
        area = self._area_of(path)
        if area is not None:
            self.index.refresh(path, area)

    def reindex(self) -> int:
        """Rebuild the listing index from every listed file; returns the sessions indexed."""
        folders = [(folder, "") for folder in self.layout.project_dirs()]
        folders += [(folder, "archive") for folder in self.layout.project_dirs(self.layout.root / ARCHIVE_DIR)]
        return self.index.rebuild(folders)

    # -- list ------------------------------------------------------------------

    def list(self, params: wire.ListParams, work: Work = NO_WORK) -> wire.ListResult:
        limit = params.limit if params.limit is not None else DEFAULT_LIST_LIMIT
        if limit < 1 or limit > MAX_LIST_LIMIT:
            raise InvalidParams(f"limit must be between 1 and {MAX_LIST_LIMIT}", limit=limit)
        after = None
        if params.cursor is not None:
            after = decode_cursor(params.cursor)
            if after is None:
                raise InvalidParams("cursor is not one this server gave out; pass nextCursor from the previous page")
        areas: list[tuple[str | None, bool]] = [(None, False)]
        if params.includeArchived:
            areas.append((ARCHIVE_DIR, True))
        try:
            listed = self._list_indexed(params, areas, limit, after, work)
        except IndexUnavailable:
            listed = self._list_files(params, areas, limit, after, work)
        if after is None:  # in-memory sessions lead the first page (they have no file to sort by)
            listed.sessions[:0] = self._list_in_memory(params)
        return listed

    def _list_in_memory(self, params: wire.ListParams) -> list[wire.SessionInfo]:
        with self._lock:
            sessions = [s for s in self._open.values() if s.in_memory]
        found = []
        for session in sessions:
            header = session.header_obj()
            if not params.all and params.cwd is not None and header.get("cwd") != params.cwd:
                continue
            data = b"\n".join([session.header.raw, *(e.raw for e in session.tree.entries)])
            summary = summarize(session.path, data, int(time.time() * 1000))
            if summary is None:
                continue
            if params.query and not matches(summary, params.query):
                continue
            info = _session_info(summary, False)
            info.path, info.inMemory = "", True
            found.append(info)
        return found

    def _list_files(
        self, params: wire.ListParams, areas: list[tuple[str | None, bool]], limit: int, after: Any, work: Work
    ) -> wire.ListResult:
        """The listing read from the files themselves (the index is locked by another sidecar)."""
        files: list[tuple[Path, bool]] = []
        for area, archived in areas:
            base = self.layout.root if area is None else self.layout.root / area
            folders = (
                [base / self.layout.cwd_dir(params.cwd).name]
                if params.cwd is not None and not params.all
                else self.layout.project_dirs(base)
            )
            for folder in folders:
                files.extend((path, archived) for path in self.layout.session_files(folder))
        found = []
        for index, (path, archived) in enumerate(files):
            # Reading summaries writes nothing: stopping between files is always safe.
            work.check_cancelled()
            work.report(f"{index} of {len(files)} sessions read", index * 100 // len(files))
            summary = self._summaries.get(path)
            if summary is None:
                continue
            if params.query and not matches(summary, params.query):
                continue
            found.append((summary, archived))
        found.sort(key=lambda item: sort_key(item[0]))
        if after is not None:
            found = [item for item in found if sort_key(item[0]) > after]
        page = found[:limit]
        next_cursor = encode_cursor(page[-1][0]) if len(found) > limit else None
        return wire.ListResult(sessions=[_session_info(s, archived) for s, archived in page], nextCursor=next_cursor)

    def _list_indexed(
        self, params: wire.ListParams, areas: list[tuple[str | None, bool]], limit: int, after: Any, work: Work
    ) -> wire.ListResult:
        scopes: list[tuple[Path, str]] = []
        prune: list[tuple[Path, str]] = []
        for area, _ in areas:
            base = self.layout.root if area is None else self.layout.root / area
            name = "" if area is None else "archive"
            if params.cwd is not None and not params.all:
                scopes.append((base / self.layout.cwd_dir(params.cwd).name, name))
            else:
                scopes.extend((folder, name) for folder in self.layout.project_dirs(base))
                prune.append((base, name))

        def check(index: int, total: int) -> None:
            # Reading files writes only the index, in one transaction: stopping rolls it back.
            work.check_cancelled()
            work.report(f"{index} of {total} sessions read", index * 100 // max(total, 1))

        self.index.sync(scopes, prune, check)
        rows = self.index.page(
            ["" if area is None else "archive" for area, _ in areas],
            None if params.cwd is None or params.all else [folder for folder, _ in scopes],
            after,
            params.query or None,
            limit + 1,
        )
        page = rows[:limit]
        next_cursor = None
        if len(rows) > limit:
            last = page[-1]
            next_cursor = encode_cursor_of(last.modified_ms, last.path)
        return wire.ListResult(
            sessions=[_session_info(r, r.area == "archive", r.snippet) for r in page], nextCursor=next_cursor
        )

    # -- archive / delete / restore ------------------------------------------------

    def archive(self, params: wire.ArchiveParams) -> wire.ArchiveResult:
        path = self._move(params.sessionId, None, ARCHIVE_DIR, "archive")
        return wire.ArchiveResult(sessionId=params.sessionId, path=str(path), archived=True)

    def unarchive(self, params: wire.ArchiveParams) -> wire.ArchiveResult:
        path = self._move(params.sessionId, ARCHIVE_DIR, None, "unarchive")
        return wire.ArchiveResult(sessionId=params.sessionId, path=str(path), archived=False)

    def delete(self, params: wire.DeleteParams) -> wire.DeleteResult:
        """Move to the trash (from the live or the archived area); nothing is erased."""
        check_session_id(params.sessionId)
        with self._lock:
            session = self._open.get(params.sessionId)
        if session is not None and not session.persisted:
            with self._lock:
                self._open.pop(session.id, None)
            self.watches.remove(session.id)
            return wire.DeleteResult(sessionId=params.sessionId, trashPath=None)
        area = None if self.layout.find(params.sessionId) is not None else ARCHIVE_DIR
        path = self._move(params.sessionId, area, TRASH_DIR, "delete")
        return wire.DeleteResult(sessionId=params.sessionId, trashPath=str(path))

    def restore(self, params: wire.RestoreParams) -> wire.RestoreResult:
        path = self._move(params.sessionId, TRASH_DIR, None, "restore")
        return wire.RestoreResult(sessionId=params.sessionId, path=str(path))

    def move(self, params: wire.MoveParams) -> wire.MoveResult:
        """Give a live session another project folder: header cwd rewritten, file moved (store/move.py)."""
        check_session_id(params.sessionId)
        if not os.path.isabs(params.cwd) or "\x00" in params.cwd:
            raise InvalidParams(f"cwd must be an absolute path, not {params.cwd!r}", field="cwd")
        with self._lock:
            open_here = self._open.get(params.sessionId)
            if open_here is not None and open_here.in_memory:
                open_here.header = Entry.from_obj({**open_here.header_obj(), "cwd": params.cwd})
                return wire.MoveResult(sessionId=params.sessionId, path="")
            if open_here is not None and not open_here.persisted:
                raise InvalidState(
                    f"session {params.sessionId} has no file yet (nothing is written before the first user or assistant "
                    "message); create it with the cwd it belongs to, or move it once it is written",
                    sessionId=params.sessionId)
            source = self.layout.find(params.sessionId)
            if source is None:
                raise SessionNotFound(f"cannot move: no live session {params.sessionId!r} below {self.layout.root}",
                                      sessionId=params.sessionId)
            target = self.layout.cwd_dir(params.cwd) / source.name
            if target == source:
                return wire.MoveResult(sessionId=params.sessionId, path=str(source))
            if os.path.lexists(target):
                raise SessionExists(f"cannot move: {target} already exists; move or delete that file first",
                                    path=str(target))
            self.layout.check_inside(target.parent)
            if open_here is not None:
                self._open.pop(params.sessionId, None)
                open_here.close()
            held = lock_path(source)  # sessionLocked while another sidecar writes it
            try:
                rewrite_header_cwd(source, params.cwd)
                unlock(held)
                held = lock_path(source)  # the rewrite made a new file: hold that one
                relocate(source, target)
            except OSError as exc:
                raise StorageError(f"could not move {source}: {exc.strerror or exc}", path=str(source)) from exc
            finally:
                unlock(held)
            treecache.drop_cache(self.layout.root, source)
            self.index.moved(source, None, None)  # its row named the old cwd: read it again where it is
            self._index_refresh(target)
        if open_here is not None:
            self._load(target)  # open again where it is now, lock and all
        return wire.MoveResult(sessionId=params.sessionId, path=str(target))

    def _move(self, session_id: str, from_area: str | None, to_area: str | None, verb: str) -> Path:
        check_session_id(session_id)
        with self._lock:
            source = self.layout.find(session_id, from_area)
            if source is None:
                where = {None: "among live sessions", ARCHIVE_DIR: "in the archive", TRASH_DIR: "in the trash"}[from_area]
                open_session = self._open.get(session_id)
                if open_session is not None and not open_session.persisted and from_area is None:
                    raise InvalidState(
                        f"session {session_id} has no file yet (nothing is written before the first user or assistant message)",
                        sessionId=session_id,
                    )
                raise SessionNotFound(f"cannot {verb}: no session {session_id!r} {where}", sessionId=session_id)
            target = self.layout.moved(source, from_area, to_area)
            if target.exists():
                raise SessionExists(
                    f"cannot {verb}: {target} already exists; delete or move that file first", path=str(target)
                )
            session = self._open.pop(session_id, None)
            if session is not None:
                self.watches.remove(session_id)
                session.close()
            # Another sidecar writing it keeps it where it is.
            try:
                held = lock_path(source)
            except FileNotFoundError:
                raise SessionNotFound(f"cannot {verb}: {source} vanished", sessionId=session_id) from None
            try:
                self.layout.check_inside(target.parent)  # a symlinked .archive / .trash leads nowhere
                relocate(source, target)
            except OSError as exc:
                raise StorageError(f"could not {verb} {source}: {exc.strerror or exc}", path=str(source)) from exc
            finally:
                unlock(held)
            treecache.drop_cache(self.layout.root, source)
            area = self._area_of(target)
            self.index.moved(source, target if area is not None else None, area)
            return target

    # -- snapshots and rewind (sidecar/snapshots/) ------------------------------------

    def snapshot(self, params: wire.SnapshotParams) -> wire.SnapshotResult:
        return self.snapshots.snapshot(self.session(params.sessionId), params)

    def diff(self, params: wire.DiffParams) -> wire.DiffResult:
        return self.snapshots.diff(self.session(params.sessionId), params)

    def rewind(self, params: wire.RewindParams) -> wire.RewindResult:
        return self.snapshots.rewind(self.session(params.sessionId), params)

    # -- upkeep: stats and retention ---------------------------------------------------

    def stats(self, params: wire.StatsParams) -> wire.StatsResult:
        if not 0 <= params.largest <= MAX_LIST_LIMIT:
            raise InvalidParams(f"largest must be between 0 and {MAX_LIST_LIMIT}", largest=params.largest)
        usage = measure(self.layout, list(self.blobs.folders), self.layout.root / INDEX_DIR, params.blobs)
        return stats_result(usage, params.largest)

    def prune(self, params: wire.PruneParams) -> wire.PruneResult:
        policy = retention_policy(params, self.settings.retention)
        candidates = [f for f in session_files(self.layout) if f.area != "trash" and f.session_id is not None]
        selected, pinned = select(candidates, policy, time.time_ns())
        if selected and len(selected) == len(candidates) and not params.confirm and not params.dryRun:
            raise InvalidParams(
                f"this policy would send every one of the {len(candidates)} sessions to the trash; "
                "pass confirm: true (--yes) if that is meant, or try it with dryRun first", field="confirm")
        chosen, skipped, moved = [], [], 0
        for item in selected:
            found = item.session
            listed = wire.PrunedSession(sessionId=found.session_id, path=str(found.path), bytes=found.size,
                                        reason=item.reason)
            if not params.dryRun:
                try:
                    self.delete(wire.DeleteParams(sessionId=found.session_id))  # type: ignore[arg-type]
                except SidecarError as exc:
                    listed.reason = exc.message
                    skipped.append(listed)
                    continue
                moved += found.size
            chosen.append(listed)
        return wire.PruneResult(selected=chosen, movedBytes=moved, pinned=len(pinned), skipped=skipped)

    # -- prompt history ------------------------------------------------------------

    def history_add(self, params: wire.HistoryAddParams) -> None:
        if not params.prompt.strip():
            raise InvalidParams("prompt is empty; send the text the user typed", field="prompt")
        if len(params.prompt) > MAX_PROMPT_CHARS:
            raise InvalidParams(f"prompt is longer than {MAX_PROMPT_CHARS} characters; it is not one a user typed",
                                field="prompt", length=len(params.prompt))
        self.history.add(params.prompt, _history_cwd(params.cwd))

    def history_search(self, params: wire.HistorySearchParams) -> wire.HistoryResult:
        if not params.query:
            raise InvalidParams("query is empty; use history/list for the newest prompts", field="query")
        found = self._history_read(lambda: self.history.search(
            params.query, _history_cwd(params.cwd), _history_limit(params.limit), params.order == "relevance"))
        return wire.HistoryResult(entries=[_history_entry(p) for p in found])

    def history_list(self, params: wire.HistoryListParams) -> wire.HistoryResult:
        found = self._history_read(lambda: self.history.recent(
            _history_cwd(params.cwd), _history_limit(params.limit), params.before))
        return wire.HistoryResult(entries=[_history_entry(p) for p in found])

    def _history_read(self, read: Callable[[], list[Prompt]]) -> list[Prompt]:
        try:
            return read()
        except (HistoryUnavailable, sqlite3.Error) as exc:
            raise StorageError(str(exc), path=str(self.history.path)) from exc


    # --- live sessions (sidecar/live/: subscriptions, roles) ---
    # The hooks above call these; each is one dict lookup when nobody subscribed.

    _live_sessions: LiveSessions | None = None

    @property
    def live(self) -> LiveSessions:
        if self._live_sessions is None:
            with self._lock:
                if self._live_sessions is None:
                    self._live_sessions = LiveSessions(self.blobs)
        return self._live_sessions

    def _live_appended(self, session: Session) -> None:
        if self._live_sessions is not None:
            self._live_sessions.appended(session)

    def _live_followed(self, session: Session, change: FileChange) -> None:
        if self._live_sessions is not None:
            if change.reloaded is not None:
                self._live_sessions.reloaded(session, change.reloaded)
            else:
                self._live_sessions.appended(session, external=True)

    def _live_leaf_moved(self, session: Session) -> None:
        if self._live_sessions is not None:
            self._live_sessions.leaf_moved(session)

    def _live_closed(self, session_id: str) -> None:
        if self._live_sessions is not None:
            self._live_sessions.closed(session_id)

    def live_subscribe(self, params: wire.SubscribeParams, subscriber: Any, client: Any) -> wire.SubscribeResult:
        """Subscribe in the session's turn; a session not open here is opened read-only and its file followed."""
        with self._lock:
            session = self._open.get(params.sessionId)
        if session is None:
            self.open(wire.OpenParams(sessionId=params.sessionId, readOnly=True))
            session = self._require_open(params.sessionId)
        else:
            self._follow(session)
        if session.id not in self.watches:
            self.live.watched_for_subscribers.add(session.id)
            self.watches.add(session)
        return self.live.subscribe(session, subscriber, params.since, client)

    def live_unsubscribe(self, params: wire.UnsubscribeParams, subscriber: Any) -> wire.UnsubscribeResult:
        return wire.UnsubscribeResult(unsubscribed=self.live.bus.unsubscribe(params.sessionId, subscriber))

    def live_take_control(self, params: wire.TakeControlParams, client: Any) -> wire.TakeControlResult:
        self._require_open(params.sessionId)
        former = self.live.roles.take(params.sessionId, client)
        return wire.TakeControlResult(sessionId=params.sessionId, tookOver=former is not None)


def _history_cwd(cwd: str | None) -> str | None:
    if cwd is not None and not os.path.isabs(cwd):
        raise InvalidParams(f"cwd must be an absolute path, not {cwd!r}", field="cwd")
    return cwd


def _history_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidParams(f"limit must be between 1 and {MAX_LIST_LIMIT}", limit=limit)
    return limit


def _history_entry(prompt: Prompt) -> wire.HistoryEntry:
    return wire.HistoryEntry(id=prompt.id, prompt=prompt.prompt, cwd=prompt.cwd, createdAt=iso_from_ms(prompt.created_ms))


def _open_warnings(session: Session) -> list[wire.OpenWarning]:
    dangling = session.dangling()
    if not dangling:
        return []
    shown = ", ".join(dangling[:5]) + (f" and {len(dangling) - 5} more" if len(dangling) > 5 else "")
    return [wire.OpenWarning(
        kind="danglingParent",
        message=(
            f"{len(dangling)} entr{'y names a parent' if len(dangling) == 1 else 'ies name parents'} not in "
            f"{session.path} ({shown}): the history before {'it' if len(dangling) == 1 else 'them'} is cut off "
            "from the context; run `session-sidecar doctor --fix` on the file to reconnect each to the entry "
            "written before it (the original is kept as a backup)"
        ),
        entryIds=dangling,
    )]


def _kept_messages(cached: treecache.CachedContext) -> memoryview | None:
    try:
        return cached.json_messages()
    except treecache.CacheDamaged:
        return None  # built from the tree instead


def _decode_json(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:  # a lone surrogate escape, which msgspec refuses and JSON.parse keeps
        return json.loads(data)


def _session_info(found: Any, archived: bool, snippet: str | None = None) -> wire.SessionInfo:
    """One listed session, from a file summary or an index row (they share these fields)."""
    modified = iso_from_ms(found.modified_ms)
    return wire.SessionInfo(
        sessionId=found.session_id,
        path=found.path,
        cwd=found.cwd,
        created=found.created,
        modified=modified,
        updatedAt=modified,  # ACP's SessionInfo field
        messageCount=found.message_count,
        firstMessage=found.first_message or "(no messages)",
        archived=archived,
        tokens=wire.SessionTokens(total=found.tokens_total or 0, last=found.tokens_last or 0),
        name=found.name,
        title=found.title,
        parentSession=found.parent_session,
        snippet=snippet,
    )
