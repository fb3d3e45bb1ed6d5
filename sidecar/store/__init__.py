"""The store: where sessions live, behind one seam (its public surface is this module).

What every backend shares stands at this package's root and is backend-neutral:

- ``base.py``: THE SEAM, the ``SessionStore`` protocol a backend implements for
  the service, ``Durability`` and ``EntryWriter`` (where appended lines become
  durable), the listing's ``Listed`` / ``ListQuery`` / ``ListPage``, the fsync
  policy and ``FileChange`` (what another writer did to a held session);
- ``session.py``: the session handle (tree, leaf, labels, name; appends through
  the writer its backend hands it), ``tree.py`` the tree, ``appending.py`` and
  ``batch.py`` an append's entries checked and completed in batch,
  ``pathcopy.py`` copying a path connected (every fork), ``payload.py`` blob
  payloads and size rules, ``encoded.py`` an import's entries as append stores
  them, ``held.py`` the sessions a process holds, ``ids.py`` session ids and
  the clock, ``compat.py`` the tool (pi, oh-my-pi) sessions stay readable by,
  ``inmemory.py`` never-written sessions in a listing, ``usage.py`` what a
  store holds (session/stats, prune) and what erasing did;
- ``choosing.py``: how a store is chosen (``open_store``), the one place the
  root imports a backend, inside the function.

The backends, each a package with its own face: ``files/`` (pi's JSONL files,
the embedded default), ``postgres/`` (PostgreSQL), ``spec/`` (the session
spec's folders); and ``index/``, the listing index the file backend keeps.
Arrows point one way: backends import the root (and the file backend, which
the others use for files on disk), the root imports no backend.

Outside ``store/``, code imports this module or a backend's face, never a
module file. The face is cheap to import: each name is loaded from its module
the first time it is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import (
    DamagedFile,
    EntryNotFound,
    InvalidSessionId,
    PathOutsideRoot,
    SessionExists,
    SessionLocked,
    SessionNotFound,
    StorageError,
)
from .lazyface import lazy_names

if TYPE_CHECKING:
    from .appending import UNSET
    from .base import (
        Area,
        ChangeHook,
        Durability,
        EntryWriter,
        HeldUpkeep,
        Listed,
        ListPage,
        ListQuery,
        SessionStore,
    )
    from .cached import CacheDamaged, CachedContext
    from .changes import FileChange, Reason
    from .choosing import ContextForCache, open_store
    from .compat import Compat
    from .durability import FsyncPolicy
    from .held import HeldSessions
    from .ids import check_session_id, inside, iso_now, new_session_id, valid_session_id
    from .pathcopy import connected_path, label_timestamps
    from .payload import BLOB_DIR, MAX_CHARS, Blobs, BlobStore, entry_object, resolve
    from .session import LoadReport, Session
    from .tree import SessionTree, TreeState
    from .usage import BLOB_GRACE_S, Erased, SessionFile, StoreUsage, folder_bytes

_WHERE = {
    "UNSET": "appending",
    "CacheDamaged": "cached",
    "CachedContext": "cached",
    "Area": "base",
    "ChangeHook": "base",
    "Durability": "base",
    "EntryWriter": "base",
    "FileChange": "changes",
    "FsyncPolicy": "durability",
    "HeldUpkeep": "base",
    "ListPage": "base",
    "ListQuery": "base",
    "Listed": "base",
    "Reason": "changes",
    "SessionStore": "base",
    "ContextForCache": "choosing",
    "open_store": "choosing",
    "Compat": "compat",
    "HeldSessions": "held",
    "check_session_id": "ids",
    "inside": "ids",
    "iso_now": "ids",
    "new_session_id": "ids",
    "valid_session_id": "ids",
    "connected_path": "pathcopy",
    "label_timestamps": "pathcopy",
    "BLOB_DIR": "payload",
    "MAX_CHARS": "payload",
    "Blobs": "payload",
    "BlobStore": "payload",
    "entry_object": "payload",
    "resolve": "payload",
    "LoadReport": "session",
    "Session": "session",
    "SessionTree": "tree",
    "TreeState": "tree",
    "BLOB_GRACE_S": "usage",
    "Erased": "usage",
    "SessionFile": "usage",
    "StoreUsage": "usage",
    "folder_bytes": "usage",
}

__all__ = [
    "Area",
    "BLOB_DIR",
    "BLOB_GRACE_S",
    "Blobs",
    "BlobStore",
    "CacheDamaged",
    "CachedContext",
    "ChangeHook",
    "Compat",
    "ContextForCache",
    "DamagedFile",
    "Durability",
    "EntryNotFound",
    "EntryWriter",
    "Erased",
    "FileChange",
    "FsyncPolicy",
    "HeldSessions",
    "HeldUpkeep",
    "InvalidSessionId",
    "ListPage",
    "ListQuery",
    "Listed",
    "LoadReport",
    "MAX_CHARS",
    "PathOutsideRoot",
    "Reason",
    "Session",
    "SessionExists",
    "SessionFile",
    "SessionLocked",
    "SessionNotFound",
    "SessionStore",
    "SessionTree",
    "StorageError",
    "StoreUsage",
    "TreeState",
    "UNSET",
    "check_session_id",
    "connected_path",
    "entry_object",
    "folder_bytes",
    "inside",
    "iso_now",
    "label_timestamps",
    "new_session_id",
    "open_store",
    "resolve",
    "valid_session_id",
]


__getattr__ = lazy_names(__name__, _WHERE, globals())
