"""The context a tree cache keeps beside a session's tree, so that the next open answers buildContext
at its leaf with bytes (store/files/treecache.py): built here, where contexts are built, and handed to the store."""

from __future__ import annotations

from operator import attrgetter

from ..context import omp as omp_context
from ..context.build import build_context
from ..context.tokens import context_tokens
from ..format.jsonl import encode
from ..store import CachedContext, Session


def context_for_cache(session: Session) -> CachedContext | None:
    """The context at the leaf the next open will have (the last entry in the file), as buildContext answers it."""
    entries = session.tree.entries
    leaf = entries[-1].id if entries else None
    cached = session.cached_context
    if cached is not None and cached.leaf_id == leaf:
        return cached
    path = session.tree.path(leaf)
    unique = session.tree.ids_unique
    ctx = omp_context.build_context(path, unique) if session.compat == "omp" else build_context(path, unique)
    # After the build: each entry whose content it read knows whether it holds a blob reference (a large
    # file's parse leaves that open); the others' references, if any, are not in the context.
    if any(map(attrgetter("has_blobs"), path)):  # in C: a path can hold 100,000s of entries
        return None  # resolved images would bloat the cache; build such a context each time
    try:
        messages = encode(ctx.messages)
    except (TypeError, ValueError):
        return None
    return CachedContext.make(
        messages,
        leaf_id=leaf,
        thinking_level=ctx.thinking_level,
        model=ctx.model,
        models=ctx.models,
        mode=ctx.mode,
        mode_data=ctx.mode_data,
        injected_rules=ctx.injected_rules,
        entry_ids=ctx.entry_ids,
        estimated_tokens=context_tokens(ctx.messages, ctx.after_compaction),
    )
