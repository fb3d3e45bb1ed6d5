"""A batch of appended entries checked, completed and added to a session's tree (before its write)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidState
from ..format.codec import encode
from ..format.jsonl import Entry
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
        for index, obj in enumerate(objs):
            try:
                prepared_obj = batch.prepare(obj, index, parent)
                # (entry_of written out: a call less for each of a large batch's entries)
                entry = Entry.from_envelope(prepared_obj, encode(prepared_obj))  # (its line is held: made just now)
                if len(entry.line) > MAX_CHARS or (self.blobs is not None and b'"image"' in entry.line):  # type: ignore[arg-type,operator]  # an entry made just now holds its line
                    # Only then can ``bound`` change anything: a longer string, an image block.
                    bounded = bound(prepared_obj, self.blobs)
                    if bounded is not prepared_obj:
                        prepared_obj, entry = bounded, entry_of(bounded)
            except Exception:
                validate_batch(prepared_objs, self.entry_rules)  # an earlier entry's own error comes first
                raise
            prepared.append(entry)
            prepared_objs.append(prepared_obj)
            batch_ids.add(entry.id)  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
            parent = entry.id
        if validate:
            validate_batch(prepared_objs, self.entry_rules)
        add = tree.add
        for entry in prepared:
            add(entry)
        return prepared, prepared_objs

    def check_writable(self) -> None:
        if self.read_only:
            raise InvalidState(
                f"session {self.id} was opened read-only; open it again without readOnly "
                "(once no other sidecar holds it) to write",
                sessionId=self.id,
                readOnly=True,
            )
