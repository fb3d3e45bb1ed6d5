"""The file backend: pi's JSONL session files below one sessions root (the embedded default).

``FileStore`` implements ``store.base.SessionStore``: ``store.py`` holds the
sessions this process has open, ``catalog.py`` the listing (the index beside the
files, and the files themselves when another sidecar holds it), ``moves.py``
archive, trash, restore and a new cwd, ``cache.py`` the tree cache written at close.

Below them, what a pi file is made of and how it is kept: ``layout.py`` (where
sessions live: the root, a folder per cwd, the archive and the trash),
``writer.py`` (the one place that opens session files for writing: appends in
one write, the fsync policy, atomic rewrites), ``lock.py`` (the one-writer
lock), ``loading.py`` (a file, or its tree cache, into a session),
``treecache.py`` (the tree cache's format), ``titles.py`` (pi's and oh-my-pi's
names), ``follow.py`` and ``filewatch.py`` (another program writing a file we
hold), ``repair.py`` (entries cut off from their history), ``filemove.py``
(moving a file with what is kept beside it), ``blobmove.py`` and
``toolmove.py`` (blobs and sessions between pi and oh-my-pi),
``terminals.py`` (a terminal's last session), ``usage.py`` and ``trash.py`` (what the root
holds, a file's pins, emptying the trash and collecting blobs: upkeep of files, in store/usage.py's terms).

Other backends may use this one (the PostgreSQL store imports and exports a
file root, the spec store writes files on disk the same way); it imports none
of them, and stands on store's root and ``store.index`` alone. The face is
cheap to import: a name is loaded from its module when first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyface import lazy_names

if TYPE_CHECKING:
    from .blobmove import inline_blobs, move_blobs
    from .filewatch import FileWatch
    from .follow import FollowsFile
    from .layout import ARCHIVE_DIR, ROOT_ENV, TRASH_DIR, Layout, default_root, encode_cwd, file_name
    from .lock import lock_path, unlock
    from .repair import RepairReport, find_dangling, reconnect_dangling
    from .session import FileSession
    from .store import FileStore
    from .terminals import Breadcrumbs, check_terminal_id
    from .toolmove import move_sessions
    from .trash import collect_blobs, empty_trash
    from .usage import AREAS, is_pinned, measure
    from .writer import SessionWriter, atomic_write, ensure_dir, fsync_dir

_WHERE = {
    "inline_blobs": "blobmove",
    "move_blobs": "blobmove",
    "FileWatch": "filewatch",
    "FollowsFile": "follow",
    "ARCHIVE_DIR": "layout",
    "ROOT_ENV": "layout",
    "TRASH_DIR": "layout",
    "Layout": "layout",
    "default_root": "layout",
    "encode_cwd": "layout",
    "file_name": "layout",
    "lock_path": "lock",
    "unlock": "lock",
    "RepairReport": "repair",
    "find_dangling": "repair",
    "reconnect_dangling": "repair",
    "FileSession": "session",
    "FileStore": "store",
    "Breadcrumbs": "terminals",
    "check_terminal_id": "terminals",
    "move_sessions": "toolmove",
    "collect_blobs": "trash",
    "empty_trash": "trash",
    "AREAS": "usage",
    "is_pinned": "usage",
    "measure": "usage",
    "SessionWriter": "writer",
    "atomic_write": "writer",
    "ensure_dir": "writer",
    "fsync_dir": "writer",
}

__all__ = [
    "ARCHIVE_DIR",
    "AREAS",
    "Breadcrumbs",
    "FileStore",
    "FileSession",
    "FileWatch",
    "FollowsFile",
    "Layout",
    "ROOT_ENV",
    "RepairReport",
    "SessionWriter",
    "TRASH_DIR",
    "atomic_write",
    "check_terminal_id",
    "collect_blobs",
    "default_root",
    "empty_trash",
    "encode_cwd",
    "ensure_dir",
    "file_name",
    "find_dangling",
    "fsync_dir",
    "inline_blobs",
    "is_pinned",
    "lock_path",
    "measure",
    "move_blobs",
    "move_sessions",
    "reconnect_dangling",
    "unlock",
]


__getattr__ = lazy_names(__name__, _WHERE, globals())
