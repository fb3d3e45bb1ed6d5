"""The tree cache a large session's file gets when this process lets go of it (store/files/treecache.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...format.jsonl import LineMoved
from ..cached import CachedContext
from ..session import Session
from . import treecache
from .session import FileSession

# The context at the leaf the next open will have, as buildContext answers it (the service builds it).
ContextForCache = Callable[[Session], "CachedContext | None"]


def save(root: Path, session: FileSession, context_for_cache: ContextForCache) -> None:
    """Write the tree cache of a large session whose file changed since its cache."""
    if not session.persisted or session.writer.error is not None or not session.tree_loaded:
        return
    try:
        stamp = treecache.FileStamp.of(os.stat(session.path))
        if stamp == session.cache_stamp or stamp.size < treecache.MIN_CACHED_BYTES:
            return
        if stamp.size != session.known_size:
            return  # lines we have not read (another writer), or a rewrite we did not lay out
        with open(session.path, "rb") as file:
            tail = treecache.sample_tail(file.fileno(), stamp.size)
            last = session.tree.entries[-1] if session.tree.entries else None
            if last is not None and os.pread(file.fileno(), last.length, last.offset) != last.raw:
                return  # the file is not laid out as we think: leave it to a full parse
    except (OSError, LineMoved):
        return
    cached = treecache.build_cache(
        session.path,
        session.header,
        session.tree,
        session.parse_errors,
        session.writer.torn_tail_at,
        session.writer.needs_newline,
        stamp,
        tail,
        context_for_cache(session),
        session.prefix,
    )
    if cached is not None:
        treecache.write_cache(root, cached)
        session.cache_stamp = stamp
