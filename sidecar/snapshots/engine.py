"""Snapshot, diff and rewind of a session's folder (the operations behind session/snapshot, /diff, /rewind).

A snapshot is a ``custom`` entry appended at the leaf whose data names a git
tree in the project's shadow repository (shadow.py). The snapshot "at or
before" an entry is found by walking the path from that entry to the root:
the first snapshot entry met, or the last snapshot taken for an entry met.

A rewind with files: snapshot the folder as it is (the undo point), refuse if
a file it would overwrite changed since the session's last snapshot, write a
journal, change the files (each by rename or unlink), update the session's
index, move the leaf, drop the journal. A crash in between leaves the journal;
the next snapshot/diff/rewind call on the session finishes it first.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import msgspec

from .. import wire
from ..errors import (
    EntryNotFound,
    InvalidParams,
    InvalidState,
    NoSnapshot,
    PathOutsideCwd,
    SnapshotFailed,
    WorktreeChanged,
)
from ..format.jsonl import Entry
from ..store import Session
from .confined import Blocked, confined
from .records import Action, NotCaptured, RewindJournal, SnapshotRecord, record_of, snapshot_entry
from .shadow import EMPTY_TREE, SNAPSHOT_DIR, ShadowRepo

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
WORKTREE = "worktree"
_CHANGE_NAMES = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "T": "typeChanged", "C": "added"}
_APPLY_BATCH = 256


class Snapshots:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.journals = root / SNAPSHOT_DIR / "journal"

    # -- finding snapshots -------------------------------------------------------

    def records(self, session: Session) -> list[tuple[Entry, SnapshotRecord]]:
        """Every snapshot entry of the session, in file order."""
        found = []
        for entry in session.tree.entries:
            if entry.type == "custom" and b"session-sidecar/snapshot" in entry.raw:
                record = record_of(entry.obj())
                if record is not None:
                    found.append((entry, record))
        return found

    def snapshot_at(self, session: Session, entry_id: str) -> tuple[Entry, SnapshotRecord] | None:
        records = self.records(session)
        by_id = {entry.id: (entry, record) for entry, record in records}
        taken_for: dict[str, tuple[Entry, SnapshotRecord]] = {}
        for entry, record in records:
            if record.entryId is not None:
                taken_for[record.entryId] = (entry, record)  # the last one taken for that entry wins
        for entry in reversed(session.path_to(entry_id)):
            if entry.id in by_id:
                return by_id[entry.id]
            if entry.id in taken_for:
                return taken_for[entry.id]
        return None

    def _folder(self, session: Session, cwd: str | None) -> Path:
        raw = cwd if cwd is not None else session.header_obj().get("cwd")
        if not isinstance(raw, str) or not raw or not os.path.isabs(raw):
            raise InvalidParams(f"the folder to snapshot must be an absolute path; got {raw!r}", cwd=raw)
        folder = Path(os.path.realpath(raw))
        if not folder.is_dir():
            raise InvalidParams(f"{raw} is not a folder; snapshots are of an existing folder", cwd=raw)
        return folder

    def _index(self, repo: ShadowRepo, session: Session) -> Path:
        """The session's index in ``repo``: made on first use from the most recent one there (a stat cache
        that saves reading every file again), set to the session's last snapshot of that folder."""
        index = repo.index_path(session.id)
        if not session.read_only:
            repo.clear_stale_lock(index)
        if index.exists():
            return index
        others = sorted((p.stat().st_mtime_ns, p) for p in index.parent.iterdir() if p.is_file() and "." not in p.name)
        if others:
            shutil.copy2(others[-1][1], index)  # with its mtime: git's racy-clean check compares against it
        last = [r for _, r in self.records(session) if r.repo == repo.name]
        # One-tree read-tree keeps the cached stat data of entries whose content is unchanged.
        repo.git("read-tree", "-m", last[-1].tree if last else EMPTY_TREE, index=index)
        return index

    # -- snapshot ------------------------------------------------------------------

    def snapshot(self, session: Session, params: wire.SnapshotParams) -> wire.SnapshotResult:
        started = time.perf_counter()
        self.resume(session)
        session.check_writable()
        at = session.leaf_id
        if params.entryId is not None:
            if params.entryId not in {e.id for e in session.path_to(at)}:
                session.get(params.entryId)
                raise InvalidParams(
                    f"entry {params.entryId} is not on the path to the leaf; snapshot the leaf, or branch there first",
                    entryId=params.entryId,
                )
            at = params.entryId
        max_bytes = params.maxFileBytes if params.maxFileBytes is not None else DEFAULT_MAX_FILE_BYTES
        if max_bytes < 0:
            raise InvalidParams("maxFileBytes must not be negative", field="maxFileBytes")
        for path in params.paths or []:
            if os.path.isabs(path) or ".." in path.split("/") or not path:
                raise InvalidParams(f"paths are relative to cwd, without '..'; got {path!r}", path=path)
        folder = self._folder(session, params.cwd)
        repo = ShadowRepo(self.root, folder)
        repo.ensure()
        fresh = not repo.index_path(session.id).exists()
        index = self._index(repo, session)
        before = repo.index_tree(index)
        tree, too_big = repo.capture(index, None if fresh else params.paths, max_bytes)
        record = SnapshotRecord(
            tree=tree, repo=repo.name, cwd=str(folder), entryId=at, notCaptured=_not_captured(too_big)
        )
        entry = session.append([snapshot_entry(record)])[0]
        changed = len(repo.changed(before, tree)) if before != tree else 0
        return wire.SnapshotResult(
            entryId=entry.id,  # type: ignore[arg-type]  # an appended entry has an id (Entry.id is Optional for the header)
            tree=tree,
            changedFiles=changed,
            notCaptured=[wire.NotCapturedFile(path=n.path, size=n.size, reason=n.reason) for n in record.notCaptured],
            durationMs=int((time.perf_counter() - started) * 1000),
        )

    # -- diff ------------------------------------------------------------------------

    def diff(self, session: Session, params: wire.DiffParams) -> wire.DiffResult:
        self.resume(session)
        points = [params.from_, params.to]
        records = [None if p == WORKTREE else self._record_for(session, p) for p in points]
        known = next((r for r in records if r is not None), None)
        folder = Path(known.cwd) if known is not None else self._folder(session, None)
        repo = ShadowRepo.named(self.root, known.repo, folder) if known is not None else ShadowRepo(self.root, folder)
        repo.ensure()
        if any(r is not None and r.repo != repo.name for r in records):
            raise InvalidParams("the two snapshots are of different folders; compare snapshots of one folder")
        trees = []
        for record in records:
            if record is not None:
                trees.append(record.tree)
            else:
                trees.append(self._worktree_tree(repo, session)[0])
        if params.contextLines < 0:
            raise InvalidParams("contextLines must not be negative", field="contextLines")
        stats = repo.numstat(trees[0], trees[1])
        files = []
        for status, path, old_path in repo.changed(trees[0], trees[1], renames=True):
            added, removed = stats.get(path, (None, None))
            files.append(
                wire.FileChange(
                    path=path,
                    change=_CHANGE_NAMES.get(status, "modified"),  # type: ignore[arg-type]  # git's status letters map onto FileChange's literals (_CHANGE_NAMES)
                    oldPath=old_path,
                    binary=path in stats and added is None,
                    additions=added,
                    deletions=removed,
                )
            )
        patch = repo.patch(trees[0], trees[1], params.contextLines) if params.patch else None
        return wire.DiffResult(fromTree=trees[0], toTree=trees[1], files=files, patch=patch)

    def _record_for(self, session: Session, entry_id: str) -> SnapshotRecord:
        found = self.snapshot_at(session, entry_id)
        if found is None:
            raise NoSnapshot(
                f"no snapshot of the files at or before entry {entry_id}; call session/snapshot during the conversation",
                entryId=entry_id,
            )
        return found[1]

    def _worktree_tree(self, repo: ShadowRepo, session: Session) -> tuple[str, list[tuple[str, int]], Path]:
        """The folder as it is now, captured into a copy of the session's index (the index itself is untouched)."""
        index = self._index(repo, session)
        scratch = index.with_name(f"{index.name}.scratch-{os.getpid()}")
        repo.clear_stale_lock(scratch)
        # With its mtime: a copy looking newer than the index would hide same-size edits made
        # in the same instant as the last snapshot from git's racy-clean check.
        shutil.copy2(index, scratch)
        tree, too_big = repo.capture(scratch, None, DEFAULT_MAX_FILE_BYTES)
        return tree, too_big, scratch

    # -- rewind ------------------------------------------------------------------------

    def rewind(self, session: Session, params: wire.RewindParams) -> wire.RewindResult:
        finished = self.resume(session)
        if finished is not None and finished.targetEntryId == params.entryId and params.files and not params.dryRun:
            return finished_result(finished, session, resumed=True)
        session.get(params.entryId)
        if not params.files:
            if not params.dryRun:
                session.branch(params.entryId)
            return wire.RewindResult(leafId=params.entryId, dryRun=params.dryRun)
        session.check_writable()
        found = self.snapshot_at(session, params.entryId)
        if found is None:
            raise NoSnapshot(
                f"no snapshot of the files at or before entry {params.entryId}; rewind without files, "
                "or take snapshots (session/snapshot) as the conversation goes",
                entryId=params.entryId,
            )
        target_entry, target = found
        folder = Path(target.cwd)
        home = self._folder(session, None)
        if folder != home and home not in folder.parents:
            raise PathOutsideCwd(
                f"the snapshot is of {folder}, outside this session's folder {home}; it is not restored there",
                path=str(folder),
                cwd=str(home),
            )
        if not folder.is_dir():
            raise InvalidState(f"the folder {folder} the snapshot was taken of is gone", cwd=str(folder))
        repo = ShadowRepo.named(self.root, target.repo, folder)
        if not repo.git_dir.is_dir():
            raise SnapshotFailed(f"the snapshot store {repo.git_dir} is gone; the files cannot be put back")
        index = self._index(repo, session)
        expected = repo.index_tree(index)
        current, too_big, scratch = self._worktree_tree(repo, session)
        try:
            actions, skipped = self._plan(repo, folder, current, target)
            behind = {path for _, path, _ in repo.changed(expected, current)} if expected != current else set()
            conflicts = sorted(behind & {a.path for a in actions})
            if conflicts and not params.force:
                shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
                raise WorktreeChanged(
                    f"{len(conflicts)} file(s) the rewind would overwrite changed outside the agent since the last "
                    f"snapshot ({shown}); snapshot them first, or pass force (they are kept in the undo snapshot)",
                    paths=conflicts,
                )
            if params.dryRun:
                return _result(params.entryId, actions, skipped, dry_run=True, snapshot_entry_id=target_entry.id)
            undo = session.append(
                [
                    snapshot_entry(
                        SnapshotRecord(
                            tree=current,
                            repo=repo.name,
                            cwd=str(folder),
                            entryId=session.leaf_id,
                            reason="rewind",
                            notCaptured=_not_captured(too_big),
                        )
                    )
                ]
            )[0]
            if session.persisted:
                session.flush()
            os.replace(scratch, index)
        finally:
            scratch.unlink(missing_ok=True)
        journal = RewindJournal(
            sessionId=session.id,
            cwd=str(folder),
            repo=repo.name,
            fromTree=current,
            toTree=target.tree,
            targetEntryId=params.entryId,
            snapshotEntryId=target_entry.id,  # type: ignore[arg-type]  # appended entries have ids (Entry.id is Optional for the header)
            undoEntryId=undo.id,  # type: ignore[arg-type]  # appended entries have ids
            actions=actions,
        )
        self._write_journal(journal)
        blocked = self._apply(journal, session)
        result = finished_result(journal, session, resumed=False)
        gone = {b.path for b in blocked}
        result.restored, result.created, result.removed = (
            [p for p in paths if p not in gone] for paths in (result.restored, result.created, result.removed)
        )
        result.skipped = skipped + blocked
        return result

    def _plan(
        self, repo: ShadowRepo, folder: Path, current: str, target: SnapshotRecord
    ) -> tuple[list[Action], list[wire.SkippedFile]]:
        """What to change to go from tree ``current`` (the folder now) to ``target``, never touching a file
        whose present content is not in ``current`` (it could not be put back by undoing)."""
        not_captured = {n.path for n in target.notCaptured}
        actions: list[Action] = []
        skipped = [
            wire.SkippedFile(
                path=n.path,
                reason="not captured in the snapshot ("
                + ("too large)" if n.reason == "tooLarge" else "a git repository of its own)"),
            )
            for n in sorted(target.notCaptured, key=lambda n: n.path)
        ]
        with confined(str(folder)) as here:
            for status, path, mode, oid in repo.raw_changes(current, target.tree):
                if path in not_captured:
                    continue
                if mode == "160000" or (status != "D" and mode not in ("100644", "100755", "120000")):
                    skipped.append(wire.SkippedFile(path=path, reason="a nested git repository (not captured)"))
                    continue
                if status == "D":
                    actions.append(Action(path=path, op="remove", kind="removed"))
                    continue
                if status == "A":
                    there = here.lstat(path)
                    if there is not None and not stat.S_ISDIR(there.st_mode):
                        skipped.append(
                            wire.SkippedFile(
                                path=path, reason="a file no snapshot holds is there (ignored or too large)"
                            )
                        )
                        continue
                actions.append(
                    Action(path=path, op="write", kind="created" if status == "A" else "restored", mode=mode, oid=oid)
                )
        return actions, skipped

    def _journal_path(self, session_id: str) -> Path:
        return self.journals / f"{session_id}.json"

    def _write_journal(self, journal: RewindJournal) -> None:
        self.journals.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._journal_path(journal.sessionId)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as out:
            out.write(msgspec.json.encode(journal))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        fd = os.open(self.journals, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _apply(self, journal: RewindJournal, session: Session) -> list[wire.SkippedFile]:
        """Run every action of the journal (each is idempotent), bring the index along, move the leaf, drop the journal."""
        folder = Path(journal.cwd)
        repo = ShadowRepo.named(self.root, journal.repo, folder)
        blocked: list[wire.SkippedFile] = []
        done: list[tuple[str, str, str]] = []
        removes = [a for a in journal.actions if a.op == "remove"]
        writes = [a for a in journal.actions if a.op == "write"]
        with confined(str(folder)) as here:
            for action in removes:
                try:
                    here.remove(action.path)
                    done.append(("0", "", action.path))
                except Blocked as exc:
                    blocked.append(wire.SkippedFile(path=action.path, reason=str(exc)))
            for action in removes:
                try:
                    here.prune_empty(action.path)
                except Blocked:
                    pass
            for start in range(0, len(writes), _APPLY_BATCH):
                batch = writes[start : start + _APPLY_BATCH]
                blobs = repo.read_blobs(sorted({a.oid for a in batch}))
                for action in batch:
                    try:
                        here.write(action.path, blobs[action.oid], action.mode)
                        done.append((action.mode, action.oid, action.path))
                    except Blocked as exc:
                        blocked.append(wire.SkippedFile(path=action.path, reason=str(exc)))
            here.sync()
        repo.update_index(repo.index_path(journal.sessionId), done)
        try:
            session.branch(journal.targetEntryId)
        except EntryNotFound:
            pass
        self._journal_path(journal.sessionId).unlink(missing_ok=True)
        return blocked

    def resume(self, session: Session) -> RewindJournal | None:
        """Finish a rewind a crash interrupted; the journal it finished, or None."""
        if session.read_only:
            return None  # the sidecar writing the session finishes it
        path = self._journal_path(session.id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            journal = msgspec.json.decode(raw, type=RewindJournal)
        except msgspec.DecodeError:
            path.unlink()  # torn before its rename: no file was touched yet
            return None
        self._apply(journal, session)
        return journal


def _not_captured(left_out: list[tuple[str, int]]) -> list[NotCaptured]:
    return [
        NotCaptured(path=p, size=size) if size >= 0 else NotCaptured(path=p, size=0, reason="nestedRepository")
        for p, size in left_out
    ]


def finished_result(journal: RewindJournal, session: Session, resumed: bool) -> wire.RewindResult:
    result = _result(
        journal.targetEntryId, journal.actions, [], dry_run=False, snapshot_entry_id=journal.snapshotEntryId
    )
    result.leafId = session.leaf_id
    result.undoEntryId = journal.undoEntryId
    result.resumed = resumed
    return result


def _result(
    leaf: str | None,
    actions: list[Action],
    skipped: list[wire.SkippedFile],
    dry_run: bool,
    snapshot_entry_id: str | None,
) -> wire.RewindResult:
    return wire.RewindResult(
        leafId=leaf,
        dryRun=dry_run,
        snapshotEntryId=snapshot_entry_id,
        restored=sorted(a.path for a in actions if a.kind == "restored"),
        created=sorted(a.path for a in actions if a.kind == "created"),
        removed=sorted(a.path for a in actions if a.kind == "removed"),
        skipped=skipped,
    )
