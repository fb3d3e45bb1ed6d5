"""session/append: the operation, in one place.

An append's entries are checked and added to the session (store/session.py), then the context's
size at the new leaf is counted, carried forward from the last append of the session when the
path just grew (the tally, context/tally.py); past ``compaction.clearToolResults.triggerTokens``
old tool outputs are cleared in one batch (operations/clearing.py); past the compaction threshold
the compactor is told (``should_compact``: autoCompact runs it), and the result says so.

A run of pipelined appends to one session (``run``) is written together: its calls are checked
and added to the session's tree one after another, as alone, then their lines go out in one
write, then each is answered. Each call's outcome is what ``append`` one call at a time gives: a
call that fails its checks adds nothing, a call whose expected leaf is not the session's is made
alone once the calls before it are written (its refusal reads their entries), and when the write
fails the run's entries leave memory and its calls are made again one at a time, each meeting the
failure (or not) alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Generator, Iterator
from typing import Any, NamedTuple

import msgspec

from .. import external, wire
from ..context.tally import TokenTally
from ..format.entries import InvalidAt, validate_entries
from ..format.jsonl import Entry
from ..store import UNSET, FileChange, Session, SessionStore, TreeState
from . import compacting

# What one call of a run gives: its result, or the error to answer it with.
Outcome = wire.AppendResult | Exception
# The session's leaf and a snapshot of its tree before a run: what ``Session.undo_run`` takes back to.
_Before = tuple[str | None, TreeState]


class _Added(NamedTuple):
    """A call of a run added to the tree, not written yet."""

    appended: list[Entry]
    objs: list[dict[str, Any]]
    tally: TokenTally
    leaf: str | None


class Appending:
    """The append operation of one service: ``store``'s sessions, and the tally of each open one.

    ``compaction_due(session_id, tokens)`` is called after an append that leaves the context past
    the compaction threshold (the service hands it to its compactor, made on first use)."""

    def __init__(self, store: SessionStore, compaction_due: Callable[[str, int], None]) -> None:
        self._store = store
        self._compaction_due = compaction_due
        # Context size per open session, carried from append to append (weak: a
        # closed session's tally goes with it).
        self._tallies: weakref.WeakKeyDictionary[Session, TokenTally] = weakref.WeakKeyDictionary()

    def forget(self, session: Session) -> None:
        """The session changed in a way an append did not make (another program wrote it): count it again."""
        self._tallies.pop(session, None)

    def should_compact(self, tokens: int) -> bool:
        return compacting.should_compact(tokens, self._store.settings.compaction)

    # -- one call -------------------------------------------------------------------------

    def append(self, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        """Append a batch. With ``defer_sync`` the sync the policy asks for is
        left to ``durability_of(...).sync_deferred`` (the caller must not answer before it)."""
        session, change = self._store.live(params.sessionId)
        return self._append_to(session, change, params, defer_sync)

    def _append_to(
        self, session: Session, change: FileChange | None, params: wire.AppendParams, defer_sync: bool = False
    ) -> wire.AppendResult:
        if params.expectedLeafId is not msgspec.UNSET and params.expectedLeafId != session.leaf_id:
            raise external.session_changed(session, params.expectedLeafId, self._store.blobs)
        parent = UNSET if params.parentId is msgspec.UNSET else params.parentId
        objs: list[dict[str, Any]] = []
        appended = session.append(params.entries, parent, defer_sync, objs)
        tokens = self._context_tokens(session, appended, objs)
        cleared, tokens = self._clear_tool_results(session, appended, objs, tokens, defer_sync)
        return self._result_of(session, appended, tokens, change, cleared, session.leaf_id)

    def _result_of(
        self,
        session: Session,
        appended: list[Entry],
        tokens: int,
        change: FileChange | None,
        cleared: wire.ClearedToolResults | None,
        leaf_id: str | None,
    ) -> wire.AppendResult:
        should_compact = self.should_compact(tokens)
        if should_compact:  # (the compaction engine is not loaded for an append that does not need it)
            self._compaction_due(session.id, tokens)
        return wire.AppendResult(
            entries=[wire.AppendedEntry(id=e.id, parentId=e.parent_id, timestamp=e.timestamp) for e in appended],  # type: ignore[arg-type]  # written: each has an id
            leafId=leaf_id,
            contextTokens=tokens,
            shouldCompact=should_compact,
            external=None if change is None else external.result_field(change),
            clearedToolResults=cleared,
        )

    def _context_tokens(self, session: Session, appended: list[Entry], objs: list[dict[str, Any]] | None = None) -> int:
        """The context size at the leaf, carried forward from the last append when the path just grew."""
        previous = self._tallies.get(session)
        tally = previous.extended(appended, objs) if previous is not None else None
        if tally is None:
            tally = counted_anew(session, appended, objs)
        self._tallies[session] = tally
        return tally.total

    def _clear_tool_results(
        self, session: Session, appended: list[Entry], objs: list[dict[str, Any]], tokens: int, defer_sync: bool
    ) -> tuple[wire.ClearedToolResults | None, int]:
        """After an append past ``compaction.clearToolResults.triggerTokens``: clear old tool outputs in one batch."""
        settings = self._store.settings.compaction.clearToolResults
        if not settings.enabled or tokens <= settings.triggerTokens:
            return None, tokens
        from . import clearing

        return clearing.clear_after_append(session, appended, objs, tokens, settings, self._tallies, defer_sync)

    # -- a run of pipelined appends ------------------------------------------------------------

    def run(self, run: list[wire.AppendParams]) -> Iterator[Outcome]:
        """``append`` of each call of ``run`` (pipelined appends to one session, none asking for an
        fsync), in order, their lines written together; each call's outcome once its lines are
        written and what the calls before it set off (listing upkeep, watchers, tool-result
        clearing, autoCompact) is done."""
        try:
            session, change = self._store.live(run[0].sessionId)
        except Exception as exc:
            yield exc
            yield from map(self._one, run[1:])
            return
        try:
            before = session.start_run()
        except Exception:
            before = None
        if before is None:  # a store or a session state that takes its appends one at a time
            yield self._alone(session, change, run[0])
            yield from map(self._one, run[1:])
            return
        at = 0
        while at < len(run):
            at = yield from self._part(session, change if at == 0 else None, run, at, before)
            if (
                at < len(run)
                and run[at].expectedLeafId is not msgspec.UNSET
                and run[at].expectedLeafId != session.leaf_id
            ):
                # Alone, after the others are written: its refusal reads the entries it did not see.
                yield self._alone(session, change, run[at]) if at == 0 else self._one(run[at])
                at += 1
            before = (session.leaf_id, session.tree.snapshot())

    def _alone(self, session: Session, change: FileChange | None, params: wire.AppendParams) -> Outcome:
        """A call of a run made alone, on the session the run took."""
        try:
            return self._append_to(session, change, params)
        except Exception as exc:
            return exc

    def _one(self, params: wire.AppendParams) -> Outcome:
        """A call of a run made as a call of its own (the session looked up again)."""
        try:
            return self.append(params)
        except Exception as exc:
            return exc

    def _part(
        self, session: Session, change: FileChange | None, run: list[wire.AppendParams], at: int, before: _Before
    ) -> Generator[Outcome, None, int]:
        """The calls of ``run`` from ``at`` until one that must come after the others are written
        (a refusal of its expected leaf, or a tool-result clearing that will append); where it stopped."""
        start = at
        prepared = self._prepare(session, run, at, before, True)
        if prepared is None:  # some call's lines fail their schema: again, each call checked alone
            # (A snapshot of its own: an undo hands the tree the one it is given, to change from then on.)
            before = (session.leaf_id, session.tree.snapshot())
            prepared = self._prepare(session, run, at, before, False)
        assert prepared is not None  # (checking each call alone never gives up)
        done, written, at = prepared
        try:
            session.persist_run(written)
        except Exception:
            session.undo_run(len(written), before)
            first = change is not None
            for params in run[start:at]:
                yield self._alone(session, change, params) if first else self._one(params)
                first = False
            return at
        for index, item in enumerate(done):
            if isinstance(item, Exception):
                yield item
                continue
            try:
                result: Outcome = self._answer(session, item, change if index == 0 else None)
            except Exception as exc:
                result = exc
            yield result
        return at

    def _answer(self, session: Session, added: _Added, change: FileChange | None) -> wire.AppendResult:
        """A call of a run once its lines are written: what ``append`` does after its write, and its result."""
        appended = added.appended
        if appended and session.on_append is not None and session.writer.exists:
            session.on_append(session, appended)
        self._tallies[session] = added.tally
        if self._store.settings.compaction.clearToolResults.enabled:
            cleared, tokens = self._clear_tool_results(session, appended, added.objs, added.tally.total, False)
        else:  # (what it gives then, without the call: most runs)
            cleared, tokens = None, added.tally.total
        return self._result_of(
            session, appended, tokens, change, cleared, added.leaf if cleared is None else session.leaf_id
        )

    def _prepare(
        self, session: Session, run: list[wire.AppendParams], at: int, before: _Before, trusting: bool
    ) -> tuple[list[_Added | Exception], list[Entry], int] | None:
        """The calls of ``run`` from ``at`` added to the tree, not written: each one's outcome
        (added, or the error it met), the entries to write, where it stopped.

        ``trusting``: the schema of the calls' lines is checked for all of them at once at the end
        (one msgspec pass instead of one per call); when any fails, or anything raises that the
        lines' being checked might have kept from happening, nothing stays added and None is
        given, for the caller to prepare them again with each call checked alone."""
        clearing = self._store.settings.compaction.clearToolResults
        tally = self._tallies.get(session)
        done: list[_Added | Exception] = []
        written: list[Entry] = []
        unchecked: list[dict[str, Any]] = []
        shared = session.run_batch(sum(len(params.entries) for params in run[at:]))
        while at < len(run):
            params = run[at]
            if params.expectedLeafId is not msgspec.UNSET and params.expectedLeafId != session.leaf_id:
                break
            at += 1
            try:
                session.check_writable()
                if params.entries:
                    parent = UNSET if params.parentId is msgspec.UNSET else params.parentId
                    appended, objs = session.add_batch(params.entries, parent, shared, not trusting)
                else:
                    appended, objs = [], []
            except Exception as exc:
                done.append(exc)
                continue
            written.extend(appended)
            try:
                extended = tally.extended(appended, objs) if tally is not None else None
                tally = extended if extended is not None else counted_anew(session, appended, objs)
            except Exception:
                if not trusting:
                    raise
                session.undo_run(len(written), before)
                return None
            done.append(_Added(appended, objs, tally, session.leaf_id))
            if trusting:
                unchecked.extend(objs)
            if clearing.enabled and tally.total > clearing.triggerTokens:
                break
        if trusting and unchecked:
            try:
                validate_entries(unchecked, session.entry_rules)
            except InvalidAt:
                session.undo_run(len(written), before)
                return None
        return done, written, at


def counted_anew(session: Session, appended: list[Entry], objs: list[dict[str, Any]] | None) -> TokenTally:
    """The tally at the session's leaf when none was carried to it (the session's first append since it
    was opened, a branch): the path before the batch counted from its lines, then the batch from the dicts
    it was appended as, which ``extended`` takes without decoding their lines again (a session's first
    append of 1,000 entries spent half its time decoding them). The whole path counted when the batch
    changes what earlier messages count for (``extended`` gives None: a compaction, a context edit)."""
    if appended and appended[-1].id == session.leaf_id:
        tally = TokenTally.of_path(session.tree.path(appended[0].parent_id)).extended(appended, objs)
        if tally is not None:
            return tally
    return TokenTally.of_path(session.tree.path(session.leaf_id))
