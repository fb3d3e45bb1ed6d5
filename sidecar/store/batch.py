"""What one append's entries go through before any is written: each envelope checked and
completed in pi's key order (ids drawn, parents and targets looked up, secrets redacted when
the store asks), and the batch's schema validated whole."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import EntryNotFound, InvalidEntry, InvalidParams
from ..format.codec import encode
from ..format.jsonl import Entry
from ..format.migrate import new_entry_id
from .ids import iso_now
from .payload import Blobs, bound

if TYPE_CHECKING:
    from ..format.entries import ShapeRefused

# Entry types naming another entry by targetId, which must be in the session.
_TARGETING = ("label", "context_edit")

# store.redactOnAppend: what each appended entry passes through before it is completed (the service's).
Redact = Callable[[dict[str, object]], dict[str, object]]


class EntryBatch:
    """The entries of one append, prepared one at a time against the session's ids and the batch's own."""

    def __init__(
        self,
        session_id: str,
        by_id: dict[str, Entry],
        batch_ids: set[str],
        objs: Sequence[object],
        redact: Redact | None,
        blobs: Blobs | None,
        id_count: int | None = None,
        compat: str = "pi",
    ) -> None:
        """``id_count``: how many new ids to draw randomness for at once (default: one per entry of ``objs``);
        a run of appends shares one EntryBatch (``batch_ids`` cleared between its calls) and one draw."""
        self.session_id, self.by_id, self.batch_ids = session_id, by_id, batch_ids
        self.redact, self.blobs = redact, blobs
        # Whose shapes the entries must fit: pi's, or under oh-my-pi's compatibility also oh-my-pi's.
        self.compat = compat
        self.ids = _IdPool(by_id, batch_ids, len(objs) if id_count is None else id_count)

    def prepare(self, obj: object, index: int, parent: str | None) -> dict[str, Any]:
        """``obj`` with its envelope checked and completed, in pi's key order.

        Its schema is checked for the whole batch afterwards (``validate_batch``),
        except a label's or a context edit's, which comes before its target is looked up.
        """
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str) or not obj["type"]:
            raise InvalidEntry(f'entries[{index}] must be an object with a string "type"', index=index)
        if obj["type"] == "session":
            raise InvalidEntry(f"entries[{index}]: a session header cannot be appended", index=index)
        entry_id = obj.get("id")
        if entry_id is None:
            ids = self.ids  # (``ids.new``'s first try written out: a large batch draws an id for most entries)
            at = ids.at
            candidate = ids.hex[at : at + 8]
            if len(candidate) == 8 and candidate not in self.by_id and candidate not in self.batch_ids:
                ids.at, entry_id = at + 8, candidate
            else:
                entry_id = ids.new()
        elif not isinstance(entry_id, str) or not entry_id or len(entry_id) > 128:
            raise InvalidEntry(f"entries[{index}].id must be a non-empty string", index=index)
        elif entry_id in self.by_id or entry_id in self.batch_ids:
            raise InvalidEntry(f"entries[{index}].id {entry_id!r} is already used in this session", index=index)
        if "parentId" in obj:
            own_parent = obj["parentId"]
            if own_parent is not None and own_parent not in self.by_id and own_parent not in self.batch_ids:
                raise EntryNotFound(
                    f"entries[{index}].parentId {own_parent!r} is not in session {self.session_id}",
                    entryId=own_parent,
                    index=index,
                )
            parent = own_parent
        if self.redact is not None:
            obj = self.redact(obj)  # the envelope and structural fields are left as they are
        timestamp = obj.get("timestamp")
        if timestamp is None:
            timestamp = iso_now()
        elif not isinstance(timestamp, str):
            raise InvalidEntry(f"entries[{index}].timestamp must be an ISO 8601 string", index=index)
        # pi's key order: type, id, parentId, timestamp, then the rest as given.
        prepared = {"type": obj["type"], "id": entry_id, "parentId": parent, "timestamp": timestamp}
        if self.redact is None:
            # (One update in C rather than a loop over the keys.) The envelope's keys keep their place, and
            # the values obj gives them are the ones just taken from it, but for an id or timestamp it gives
            # as null: those are put back.
            prepared.update(obj)
            if prepared["id"] is None:
                prepared["id"] = entry_id
            if prepared["timestamp"] is None:
                prepared["timestamp"] = timestamp
        else:  # (a redacted obj's envelope is not read again: the id and parent are the ones checked above)
            for key, value in obj.items():
                if key not in prepared:
                    prepared[key] = value
        if prepared["type"] in _TARGETING:
            prepared = bound(prepared, self.blobs)
            validate_one(prepared, index, self.compat)
            if prepared.get("targetId") not in self.by_id and prepared.get("targetId") not in self.batch_ids:
                raise EntryNotFound(
                    f"entries[{index}].targetId {prepared.get('targetId')!r} is not in session {self.session_id}",
                    entryId=prepared.get("targetId"),
                    index=index,
                )
        return prepared


def entry_of(prepared: dict[str, Any]) -> Entry:
    """``Entry.from_obj`` of an entry ``EntryBatch.prepare`` completed: its type, id and
    timestamp are strings and its parentId a string or null, so they are taken as they are."""
    return Entry.from_envelope(prepared, encode(prepared))


def validate_one(obj: dict[str, Any], index: int, compat: str = "pi") -> None:
    # The shapes are imported at the first check, not with the session: an open need not build their types.
    from ..format.entries import ShapeRefused, validate_entry

    try:
        validate_entry(obj, compat)
    except ShapeRefused as refused:
        raise shape_error(index, refused) from None


def validate_batch(objs: list[dict[str, Any]], compat: str = "pi") -> None:
    """Check a batch's entries against pi's shapes; InvalidParams naming the field of the first that fails."""
    from ..format.entries import InvalidAt, validate_entries  # (at the first check: see validate_one)

    try:
        validate_entries(objs, compat)
    except InvalidAt as failed:
        raise shape_error(failed.index, failed.error) from None


def shape_error(index: int, refused: ShapeRefused) -> InvalidParams:
    """-32602 for an entry pi would misread: ``data.field`` the field (``entries[0].message.toolCallId``),
    ``data.index`` the entry, ``data.expected`` the shape pi expects there (also in the message)."""
    field = f"entries[{index}]" + ("." + refused.field if refused.field else "")
    expected = f"; expected {refused.expected}" if refused.expected else ""
    return InvalidParams(
        f"{field}: {refused.reason}{expected}. Nothing was written.",
        field=field,
        index=index,
        expected=refused.expected,
    )


_random_pool = bytearray()
_random_lock = threading.Lock()


def _random_hex(count: int) -> str:
    """``count`` random bytes as hex, from a pool read 4 KiB at a time (a read of
    os.urandom costs several microseconds, as much as the rest of a small append)."""
    with _random_lock:
        if len(_random_pool) < count:
            _random_pool.extend(os.urandom(max(4096, count)))
        taken = _random_pool[:count]
        del _random_pool[:count]
    return taken.hex()


class _IdPool:
    """New entry ids for a batch, as ``new_entry_id`` makes them, drawn from one read of randomness."""

    def __init__(self, by_id: dict[str, Entry], batch: set[str], count: int) -> None:
        self.by_id, self.batch = by_id, batch
        self.taken = _Taken(by_id, batch)
        # Enough for every entry (counting those that bring their own id costs more than the few bytes).
        self.hex = _random_hex(4 * count)
        self.at = 0  # where the next id's digits start in ``hex``

    def new(self) -> str:
        at = self.at
        if at < len(self.hex):
            self.at = at + 8
            candidate = self.hex[at : at + 8]
            # (Both looked in here: ``in self.taken`` is a call of Python code, a fifth of a new id's cost.)
            if candidate not in self.by_id and candidate not in self.batch:
                return candidate
        return new_entry_id(self.taken)  # type: ignore[arg-type]  # _Taken answers ``in``, all new_entry_id asks


class _Taken:
    """Ids in use: the session's and the pending batch's."""

    def __init__(self, by_id: dict[str, Entry], batch: set[str]) -> None:
        self.by_id, self.batch = by_id, batch

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id or entry_id in self.batch
