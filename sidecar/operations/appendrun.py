"""A run of pipelined appends to one session, written together (``Writing.append_run``).

The calls of a run are checked and added to the session's tree one after another, as alone, then
their lines go out in one write, then each is answered. Each call's outcome is what ``append``
one call at a time gives: a call that fails its checks adds nothing, a call whose expected leaf
is not the session's is made alone once the calls before it are written (its refusal reads
their entries), and when the write fails the run's entries leave memory and its calls are made
again one at a time, each meeting the failure (or not) alone. What a call does once written (the
watchers, its tally, tool-result clearing, its result) is the service's (``answer``).
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Iterator

import msgspec

from .. import wire
from ..config import ClearToolResultsSettings
from ..context.tally import TokenTally
from ..format.entries import InvalidAt, validate_entries
from ..format.jsonl import Entry
from ..store import UNSET, Session

Outcome = Any  # wire.AppendResult | Exception


class AppendRun:
    """One run: ``alone(params)`` makes a call of it alone (``append`` on the session the run
    took), ``one(params)`` makes it as a call of its own (``append``, the session looked up
    again), ``answer(session, appended, objs, tally, change, leaf)`` finishes a written call."""

    def __init__(self, tallies: Any, clearing: ClearToolResultsSettings, alone: Callable[[wire.AppendParams], Outcome],
                 one: Callable[[wire.AppendParams], Outcome], answer: Callable[..., wire.AppendResult]) -> None:
        self.tallies, self.clearing = tallies, clearing
        self.alone, self.one, self.answer = alone, one, answer

    def run(self, session: Session, change: Any, run: list[wire.AppendParams]) -> Iterator[Outcome]:
        """Each call's outcome, in order, once its lines are written and what the calls before it
        set off (listing upkeep, watchers, tool-result clearing, autoCompact) is done."""
        try:
            before = session.start_run()
        except Exception:
            before = None
        if before is None:  # a store or a session state that takes its appends one at a time
            yield self.alone(run[0])
            yield from map(self.one, run[1:])
            return
        at = 0
        while at < len(run):
            at = yield from self._part(session, change if at == 0 else None, run, at, before)
            if at < len(run) and run[at].expectedLeafId is not msgspec.UNSET and run[at].expectedLeafId != session.leaf_id:
                # Alone, after the others are written: its refusal reads the entries it did not see.
                yield self.alone(run[at]) if at == 0 else self.one(run[at])
                at += 1
            before = (session.leaf_id, session.tree.snapshot())

    def _part(self, session: Session, change: Any, run: list[wire.AppendParams], at: int,
              before: tuple[Any, Any]) -> Generator[Outcome, None, int]:
        """The calls of ``run`` from ``at`` until one that must come after the others are written
        (a refusal of its expected leaf, or a tool-result clearing that will append); where it stopped."""
        start = at
        prepared = self._prepare(session, run, at, before, True)
        if prepared is None:  # some call's lines fail their schema: again, each call checked alone
            # (A snapshot of its own: an undo hands the tree the one it is given, to change from then on.)
            before = (session.leaf_id, session.tree.snapshot())
            prepared = self._prepare(session, run, at, before, False)
        done, written, at = prepared
        try:
            session.persist_run(written)
        except Exception:
            session.undo_run(len(written), before)
            first = change is not None
            for params in run[start:at]:
                yield self.alone(params) if first else self.one(params)
                first = False
            return at
        for index, item in enumerate(done):
            if len(item) == 1:
                yield item[0]
                continue
            appended, objs, tally, leaf = item
            try:
                result = self.answer(session, appended, objs, tally, change if index == 0 else None, leaf)
            except Exception as exc:
                result = exc
            yield result
        return at

    def _prepare(self, session: Session, run: list[wire.AppendParams], at: int, before: tuple[Any, Any],
                 trusting: bool) -> tuple[list[tuple[Any, ...]], list[Entry], int] | None:
        """The calls of ``run`` from ``at`` added to the tree, not written: each one's outcome
        ((entries, objs, tally, leaf) or (exception,)), the entries to write, where it stopped.

        ``trusting``: the schema of the calls' lines is checked for all of them at once at the end
        (one msgspec pass instead of one per call); when any fails, or anything raises that the
        lines' being checked might have kept from happening, nothing stays added and None is
        given, for the caller to prepare them again with each call checked alone."""
        clearing = self.clearing
        tally = self.tallies.get(session)
        done: list[tuple[Any, ...]] = []  # (entries, objs, tally, leaf) or (exception,)
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
                done.append((exc,))
                continue
            written.extend(appended)
            try:
                extended = tally.extended(appended, objs) if tally is not None else None
                tally = extended if extended is not None else TokenTally.of_path(session.tree.path(session.leaf_id))
            except Exception:
                if not trusting:
                    raise
                session.undo_run(len(written), before)
                return None
            done.append((appended, objs, tally, session.leaf_id))
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
