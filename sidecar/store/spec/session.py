"""One open spec session: the same in-memory tree as any session, written as spec records.

``SpecSession`` is a ``Session`` whose durability point is a ``SpecWriter``:
appends are translated to records (codec.translate) and whatever the format
cannot hold is refused before anything is written (``FormatCannotHold``).
The session is one chain: an append below anything but the leaf would branch.
Another program's appends are not followed (the spec's own agent takes a
per-session mutex in its process; it and we do not write one session at once,
and our flock keeps two sidecars apart).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ...errors import DamagedFile, FormatCannotHold, StorageError
from ...format.cycles import cycles_paused
from ...format.jsonl import Entry
from ...format.version import CURRENT_VERSION
from ..base import FileChange, FsyncPolicy
from ..files.lock import lock_path, unlock
from ..ids import iso_now
from ..session import UNSET, LoadReport, Session
from .codec import EntryBuilder, Translation, entry_id, translate
from .file import ReadRecords, read_records
from .layout import METADATA_FILE, SESSION_FILE
from .metadata import fold, rebuild
from .records import MessageRecord, SessionMetadata, decode_metadata
from .writer import SpecWriter

FORMAT_NAME = "spec"


def _header(metadata: SessionMetadata) -> Entry:
    # The format has no working folder: the header's cwd is empty.
    return Entry.from_obj(
        {"type": "session", "version": CURRENT_VERSION, "id": metadata.id, "timestamp": metadata.createdAt, "cwd": ""}
    )


def cannot_hold(what: str, session_id: str, **data: Any) -> FormatCannotHold:
    return FormatCannotHold(
        f"session {session_id} is stored in the spec format, which cannot hold {what}; nothing was written "
        "(convert it to pi's format with session/convert to keep such entries)",
        sessionId=session_id,
        format=FORMAT_NAME,
        **data,
    )


class SpecSession(Session):
    writer: SpecWriter

    def __init__(self, folder: Path, metadata: SessionMetadata, writer: SpecWriter) -> None:
        super().__init__(folder / SESSION_FILE, _header(metadata), writer)
        self.folder = folder
        self.metadata = metadata
        self.next_seq = 1
        self.seq_of: dict[str, int] = {}  # entry id -> seq of its record
        self.damaged_lines: list[int] = []
        self.metadata_rebuilt = False
        # Turns records into entries (tool names by call id, seqs so far): loading and appending share it.
        self.builder = EntryBuilder()
        # The translations of the batch being appended (append -> _persist).
        self._pending: list[Translation] | None = None

    # -- construction -----------------------------------------------------------

    @classmethod
    def create(cls, folder: Path, metadata: SessionMetadata, policy: FsyncPolicy) -> SpecSession:
        writer = SpecWriter(folder, policy, exists=False)
        writer.create(metadata)
        return cls(folder, metadata, writer)

    @classmethod
    def load(cls, folder: Path, policy: FsyncPolicy, read_only: bool = False) -> tuple[SpecSession, LoadReport]:
        path = folder / SESSION_FILE
        lock_fd = None if read_only else lock_path(path)
        try:
            session = cls._read(folder, policy, read_only)
        except BaseException:
            unlock(lock_fd)
            raise
        session.writer.lock_fd = lock_fd
        return session, LoadReport(len(session.damaged_lines), None)

    @classmethod
    def _read(cls, folder: Path, policy: FsyncPolicy, read_only: bool) -> SpecSession:
        try:
            with cycles_paused():  # as pi's loader: the records and entries made here never form cycles
                read = read_records(folder / SESSION_FILE)
        except OSError as exc:
            raise StorageError(
                f"could not read {folder / SESSION_FILE}: {exc.strerror or exc}", path=str(folder)
            ) from exc
        metadata, rebuilt = _metadata_of(folder, read)
        writer = SpecWriter(folder, policy, exists=True)
        writer.torn_tail_at = read.torn_tail_at
        session = cls(folder, metadata, writer)
        session.read_only = read_only
        session.damaged_lines = read.damaged_lines
        session.parse_errors = len(read.damaged_lines)
        builder = session.builder
        with cycles_paused():
            for record in read.records:
                entry = Entry.from_obj(builder.add(record))
                session.tree.add(entry)
                session.seq_of[entry.id] = record.seq  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)
                session.next_seq = max(session.next_seq, record.seq + 1)
        if rebuilt and not read_only:
            writer.write_metadata(metadata)  # a missing or damaged metadata.json is written again
        session.metadata_rebuilt = rebuilt
        return session

    # -- what the file does not follow ----------------------------------------------

    def follow(self, wait: bool = True) -> FileChange | None:
        return None

    def changed_behind(self, before_call: bool = False, turn: int | None = None) -> bool:
        return False

    def settle_unfinished(self) -> bool:
        return False

    def _note_file(self) -> None:
        pass

    def branch(self, entry_id: str | None) -> None:
        if entry_id != self.tree.leaf_id:
            raise cannot_hold("a branch (session/branch moves the leaf off the end of the chain)", self.id)

    @property
    def name(self) -> str | None:
        return self.metadata.name

    # -- writes -------------------------------------------------------------------

    def append(
        self,
        objs: list[dict[str, Any]],
        parent_id: Any = UNSET,
        defer_sync: bool = False,
        objs_out: list[dict[str, Any]] | None = None,
    ) -> list[Entry]:
        """Each entry is translated to its record first, and what goes into the tree is the entry that record
        reads back as: the session is the same before and after a reopen. Anything the format cannot hold
        fails the whole batch before a byte is written."""
        self.writer.check()
        self.check_writable()
        leaf = self.tree.leaf_id
        if parent_id is not UNSET and parent_id != leaf:
            raise cannot_hold(f"a branch (an entry below {parent_id!r} while the leaf is {leaf!r})", self.id)
        normalized: list[dict[str, Any]] = []
        translations: list[Translation] = []
        seq, builder = self.next_seq, self.builder.copy()
        builder.parent = leaf
        batch_seq: dict[str, int] = {}
        for index, obj in enumerate(objs):
            if not isinstance(obj, dict):
                normalized.append(obj)  # Session.append says what is wrong with it
                continue
            expected_parent = normalized[-1].get("id") if normalized else leaf
            if "parentId" in obj and obj["parentId"] != expected_parent:
                raise cannot_hold(
                    f"a branch (entries[{index}].parentId is not the entry before it)", self.id, index=index
                )
            obj = {**obj, "timestamp": obj.get("timestamp") or iso_now()}
            kept = None
            if obj.get("type") == "compaction":
                kept = self._kept_seq(obj.get("firstKeptEntryId"), seq, batch_seq)
            translation = translate(obj, seq, kept)
            if translation.lost:
                raise cannot_hold(translation.lost[0], self.id, index=index)
            if translation.record is not None:
                own = entry_id(seq)
                if obj.get("id") not in (None, own):
                    raise cannot_hold(
                        f"an entry id of its own (entries[{index}].id; a record's id is its seq: leave id out)",
                        self.id,
                        index=index,
                    )
                obj = builder.add(translation.record)
                obj.pop("parentId")
                batch_seq[own] = seq
                seq += 1
            normalized.append(obj)
            translations.append(translation)
        self._pending = translations
        try:
            appended = super().append(normalized, parent_id, defer_sync, objs_out)
        finally:
            self._pending = None
        self.builder = builder
        return appended

    def _persist(self, batch: list[Entry], defer_sync: bool = False) -> None:
        translations = self._pending
        assert translations is not None and len(translations) == len(batch)
        records = [t.record for t in translations if t.record is not None]
        metadata = fold(self.metadata, translations)
        durable = self.writer.policy is FsyncPolicy.ALWAYS or (
            self.writer.policy is not FsyncPolicy.NEVER
            and any(e.type == "message" and e.role() == "assistant" for e in batch)
        )
        if not self.in_memory:
            self.writer.append(records, metadata, durable)
        self.metadata = metadata
        self.next_seq += len(records)
        for entry, translation in zip(batch, translations):
            if translation.record is not None:
                self.seq_of[entry.id] = translation.record.seq  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)

    def _kept_seq(self, kept_id: Any, own_seq: int, batch_seq: dict[str, int]) -> int:
        """The seq ``firstKeptEntryId`` stands for: its record's, else the next record's after it."""
        if kept_id in self.seq_of:
            return self.seq_of[kept_id]
        if kept_id in batch_seq:
            return batch_seq[kept_id]
        entries = self.tree.entries
        at = next((i for i, e in enumerate(entries) if e.id == kept_id), len(entries))
        return next((self.seq_of[e.id] for e in entries[at:] if e.id in self.seq_of), own_seq)

    def _create_file(self) -> None:
        pass  # made at create (S7.1: the folder, an empty session.jsonl and metadata.json)


def _metadata_of(folder: Path, read: ReadRecords) -> tuple[SessionMetadata, bool]:
    """metadata.json as it is, or rebuilt from the records (True) when missing, damaged or of another session."""
    try:
        metadata = decode_metadata((folder / METADATA_FILE).read_bytes())
        if metadata.id == folder.name:
            return _caught_up(metadata, read)
    except (OSError, ValueError):
        pass
    try:
        created = (folder / SESSION_FILE).stat().st_mtime
    except OSError as exc:
        raise DamagedFile(f"{folder} has no readable session.jsonl", path=str(folder)) from exc
    from .codec import ms_to_iso

    return rebuild(folder.name, read.records, ms_to_iso(created * 1000) or ""), True


def _caught_up(metadata: SessionMetadata, read: ReadRecords) -> tuple[SessionMetadata, bool]:
    """metadata.json as the records say (True: it was behind them, a crash between the two writes)."""
    messages = [r for r in read.records if isinstance(r, MessageRecord)]
    last = messages[-1].timestamp if messages else metadata.createdAt
    if metadata.messageCount == len(messages) and metadata.lastMessageAt == last:
        return metadata, False
    return msgspec.structs.replace(metadata, messageCount=len(messages), lastMessageAt=last), True
