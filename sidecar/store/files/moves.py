"""Moving a session's file: between the live area, the archive and the trash, or to another cwd's folder.

A file another sidecar is writing stays where it is (its lock is taken for the
move); a session this process holds is let go first and, for a new cwd, opened
again where it went.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ...errors import InvalidState, SessionExists, SessionNotFound, StorageError
from ..base import Area
from ..ids import check_session_id
from ..session import Session
from . import treecache
from .catalog import Catalog
from .filemove import relocate, rewrite_header_cwd
from .layout import ARCHIVE_DIR, TRASH_DIR, Layout
from .lock import lock_path, unlock


class MovingStore(Protocol):
    """What a move needs of the file store (store.py): its layout, the sessions it holds, its listing."""

    layout: Layout
    catalog: Catalog
    _lock: threading.RLock

    def held(self, session_id: str) -> Session | None: ...

    def take_held(self, session_id: str, moving_on: bool = False) -> Session | None: ...

    def moved_unwritten(self, session_id: str, cwd: str) -> bool: ...

    def reload(self, path: Path) -> None: ...


_FOLDER: dict[Area, str | None] = {"live": None, "archive": ARCHIVE_DIR, "trash": TRASH_DIR}
_VERB: dict[tuple[Area | None, Area], str] = {
    ("live", "archive"): "archive",
    ("archive", "live"): "unarchive",
    (None, "trash"): "delete",
    ("trash", "live"): "restore",
}
_WHERE = {None: "among live sessions", ARCHIVE_DIR: "in the archive", TRASH_DIR: "in the trash"}


def move_area(store: MovingStore, session_id: str, from_area: Area | None, to: Area) -> Path:
    """Archive, unarchive, restore, or trash (``from_area`` None: from the live area or the archive)."""
    verb = _VERB[(from_area, to)]
    check_session_id(session_id)
    layout = store.layout
    if from_area is None:
        from_area = "live" if layout.find(session_id) is not None else "archive"
    source_folder, target_folder = _FOLDER[from_area], _FOLDER[to]
    with store._lock:
        source = layout.find(session_id, source_folder)
        if source is None:
            held = store.held(session_id)
            if held is not None and not held.persisted and source_folder is None:
                raise InvalidState(
                    f"session {session_id} has no file yet (nothing is written before the first user or assistant message)",
                    sessionId=session_id,
                )
            raise SessionNotFound(
                f"cannot {verb}: no session {session_id!r} {_WHERE[source_folder]}", sessionId=session_id
            )
        target = layout.moved(source, source_folder, target_folder)
        if target.exists():
            raise SessionExists(
                f"cannot {verb}: {target} already exists; delete or move that file first", path=str(target)
            )
        store.take_held(session_id)
        layout.check_inside(target.parent)  # a symlinked .archive / .trash leads nowhere
        _relocate_locked(session_id, source, target, verb)
        treecache.drop_cache(layout.root, source)
        store.catalog.moved(source, target)
        return target


def move_cwd(store: MovingStore, session_id: str, cwd: str) -> str:
    """Give a live session another project folder: header cwd rewritten, file moved (store/files/filemove.py)."""
    check_session_id(session_id)
    layout = store.layout
    with store._lock:
        if store.moved_unwritten(session_id, cwd):
            return ""
        # Every file of the id, not the first a search finds: with a copy of the session in the
        # target folder, "moving" the copy onto itself answered success and moved nothing.
        files = layout.find_all(session_id)
        held = store.held(session_id)
        source = held.path if held is not None else (files[0] if files else None)
        if source is None:
            raise SessionNotFound(
                f"cannot move: no live session {session_id!r} below {layout.root}", sessionId=session_id
            )
        target = layout.project_dir(cwd) / source.name
        others = [path for path in files if path != source]
        if others:  # which of two files of one id a later open takes is chance: keep one first
            raise SessionExists(
                f"cannot move: session {session_id} is also in {others[0]}; move or delete that file first",
                path=str(others[0]),
            )
        if target == source:
            return str(source)
        if os.path.lexists(target):
            raise SessionExists(
                f"cannot move: {target} already exists; move or delete that file first", path=str(target)
            )
        layout.check_inside(target.parent)
        was_open = store.take_held(session_id, moving_on=True) is not None
        _relocate_locked(session_id, source, target, "move", lambda: rewrite_header_cwd(source, cwd))
        treecache.drop_cache(layout.root, source)
        store.catalog.moved(source, None)  # its row named the old cwd: read it again where it is
        store.catalog.refresh(target)
    if was_open:
        store.reload(target)  # open again where it is now, lock and all
    return str(target)


def _relocate_locked(
    session_id: str, source: Path, target: Path, verb: str, first: Callable[[], None] | None = None
) -> None:
    """Move ``source`` to ``target`` holding its lock: another sidecar writing it keeps it where it is
    (sessionLocked). ``first`` rewrites the file before it moves (a new file, whose lock is taken again)."""
    try:
        held = lock_path(source)
    except FileNotFoundError:
        raise SessionNotFound(f"cannot {verb}: {source} vanished", sessionId=session_id) from None
    try:
        if first is not None:
            first()
            unlock(held)
            held = lock_path(source)
        relocate(source, target)
    except OSError as exc:
        raise StorageError(f"could not {verb} {source}: {exc.strerror or exc}", path=str(source)) from exc
    finally:
        unlock(held)
