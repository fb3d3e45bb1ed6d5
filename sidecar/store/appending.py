"""A batch of appended entries checked, completed and added to a session's tree (before its write)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidState
from ..format.codec import encode_joined
from ..format.entry import message_head_of
from ..format.jsonl import BLOB_MARK, Entry
from .batch import EntryBatch, Redact, entry_of, validate_batch
from .payload import MAX_CHARS, Blobs, bound

if TYPE_CHECKING:
    from .tree import SessionTree

# Marks "parentId not given" apart from an explicit null (a new root).
UNSET: Any = object()


class AddsBatches:
    """Session's part that turns a batch of objects into entries of its tree (session.py)."""

    id: str
    read_only: bool
    compat: str
    prefix: bytes
    blobs: Blobs | None
    redact_entry: Redact | None

    @property
    def tree(self) -> SessionTree:
        raise NotImplementedError

    def get(self, entry_id: str) -> Entry:
        raise NotImplementedError

    @property
    def entry_rules(self) -> str:
        """Whose entry shapes an append must fit: "omp" (pi's and oh-my-pi's) under oh-my-pi's
        compatibility or in a file that starts with oh-my-pi's title line (oh-my-pi's whatever the
        root, as titles.py names it), else "pi"."""
        return "omp" if self.compat == "omp" or self.prefix else "pi"

    def run_batch(self, entry_count: int) -> EntryBatch:
        """What the calls of a run of appends share (``add_batch``'s ``shared``): the set-up of each
        call's EntryBatch, and one draw of randomness for the new ids of their ``entry_count`` entries."""
        return EntryBatch(
            self.id, self.tree.by_id, set(), (), self.redact_entry, self.blobs, entry_count, self.entry_rules
        )

    def add_batch(
        self,
        objs: list[dict[str, Any]],
        parent_id: Any = UNSET,
        shared: EntryBatch | None = None,
        validate: bool = True,
    ) -> tuple[list[Entry], list[dict[str, Any]]]:
        """A batch's entries checked and completed (``append``'s doc), then added to the tree, not
        written: the caller writes them (``persist_run``) or takes them out again. Nothing is added
        when any entry fails. Also the lines as dicts (as written; not to be changed).
        ``shared``: this session's ``run_batch``, made since its tree last changed other than by add_batch.
        ``validate=False``: the batch's schema is not checked whole (the caller checks the lines of
        several batches at once, and takes them all out again when any fails)."""
        tree = self.tree
        parent = tree.leaf_id if parent_id is UNSET else parent_id
        if parent is not None:
            self.get(parent)
        prepared: list[Entry] = []
        prepared_objs: list[dict[str, Any]] = []
        if shared is None:
            batch_ids: set[str] = set()
            batch = EntryBatch(
                self.id, tree.by_id, batch_ids, objs, self.redact_entry, self.blobs, compat=self.entry_rules
            )
        else:
            batch, batch_ids = shared, shared.batch_ids
            batch_ids.clear()  # (the ids of the run's calls before are in the tree now)
        # Each entry checked and completed first, then the lines made (_entries); an entry's refusal comes
        # after what the entries before it meet on the way to their lines, as when each was made in turn.
        refused: Exception | None = None
        completed: list[dict[str, Any]] = []
        for index, obj in enumerate(objs):
            try:
                prepared_obj = batch.prepare(obj, index, parent)
            except Exception as error:
                refused = error
                break
            completed.append(prepared_obj)
            parent = prepared_obj["id"]
            batch_ids.add(parent)
        try:
            self._entries(completed, prepared, prepared_objs)
        except Exception:
            validate_batch(prepared_objs, self.entry_rules)  # an earlier entry's own error comes first
            raise
        if refused is not None:
            validate_batch(prepared_objs, self.entry_rules)
            raise refused
        if validate:
            validate_batch(prepared_objs, self.entry_rules)
        add = tree.add
        for entry in prepared:
            add(entry)
        return prepared, prepared_objs

    def _entries(
        self, completed: list[dict[str, Any]], prepared: list[Entry], prepared_objs: list[dict[str, Any]]
    ) -> None:
        """The entries of the completed objects, into ``prepared`` (and the objects as stored into
        ``prepared_objs``), one at a time: where one fails, those before it are there.

        Their lines are encoded in one call, and the marks that send a line through ``bound`` (an image
        where the store keeps blobs; a line past ``MAX_CHARS``) and that set ``has_blobs`` looked for in
        them all at once: a batch holding neither (most) makes its entries from its lines as they are."""
        blobs = self.blobs
        joined = encode_joined(completed) if completed else None
        lines = joined.split(b"\n") if joined is not None else []
        if (
            joined is None
            or (blobs is not None and b'"image"' in joined)
            or (len(joined) > MAX_CHARS and max(map(len, lines)) > MAX_CHARS)
        ):
            for prepared_obj in completed:  # (each entry's own line, and its own checks)
                entry = entry_of(prepared_obj)  # (its line is held: made just now)
                if len(entry.line) > MAX_CHARS or (blobs is not None and b'"image"' in entry.line):  # type: ignore[arg-type,operator]  # an entry made just now holds its line
                    # Only then can ``bound`` change anything: a longer string, an image block.
                    bounded = bound(prepared_obj, blobs)
                    if bounded is not prepared_obj:
                        prepared_obj, entry = bounded, entry_of(bounded)
                prepared.append(entry)
                prepared_objs.append(prepared_obj)
            return
        if BLOB_MARK in joined:
            for prepared_obj, line in zip(completed, lines):
                prepared.append(Entry.from_envelope(prepared_obj, line))
        else:
            for prepared_obj, line in zip(completed, lines):
                # (Entry.from_envelope written out, its search for the mark made above for every line)
                prepared.append(
                    Entry(
                        prepared_obj["type"],
                        prepared_obj["id"],
                        prepared_obj.get("parentId"),
                        prepared_obj["timestamp"],
                        line,
                        message_head_of(prepared_obj),
                        has_blobs=False,
                    )
                )
        prepared_objs.extend(completed)

    def check_writable(self) -> None:
        if self.read_only:
            raise InvalidState(
                f"session {self.id} was opened read-only; open it again without readOnly "
                "(once no other sidecar holds it) to write",
                sessionId=self.id,
                readOnly=True,
            )
