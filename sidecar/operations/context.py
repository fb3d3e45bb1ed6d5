"""``session/buildContext``: from the tree cache's bytes when they answer it, else built from the path."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .. import external, wire
from ..context import omp as omp_context
from ..context.build import build_context
from ..context.delta import make_cursor, since_base
from ..context.llm import convert_to_llm
from ..context.tokens import context_tokens
from ..store import treecache
from ..store.follow import FileChange
from ..store.payload import BlobStore, resolve
from ..store.session import Session


def cursor_kind(fmt: str, rules: str) -> str:
    """What a cursor was made for: a context of another format or other rules is not a base for a delta."""
    return fmt if rules == "pi" else f"{fmt}/{rules}"


def answer(
    session: Session, change: FileChange | None, params: wire.BuildContextParams, blobs: BlobStore, raw_results: bool
) -> wire.BuildContextResult:
    leaf = session.leaf_id if params.leafId is msgspec.UNSET else params.leafId
    rules = params.rules or session.compat
    cached = session.cached_context if rules == session.compat else None
    kept = _kept_messages(cached) if cached is not None and cached.leaf_id == leaf else None
    if kept is not None and params.format == "agent" and params.since is None:
        assert cached is not None
        # A path never changes once written (the file is append-only), so neither does its context.
        return wire.BuildContextResult(
            messages=msgspec.Raw(kept) if raw_results else _decode_json(bytes(kept)),  # type: ignore[arg-type]
            **_described(cached),
            leafId=leaf,  # type: ignore[arg-type]
            estimatedTokens=cached.estimated_tokens,
            entryIds=cached.entry_ids,
            cursor=make_cursor(session.id, leaf, cached.entry_ids, cursor_kind(params.format, rules)),
            external=external.result_field(change),
        )
    path = session.path_to(leaf)  # type: ignore[arg-type]
    ctx = omp_context.build_context(path) if rules == "omp" else build_context(path)
    if any(e.has_blobs for e in path):
        resolve(ctx.messages, blobs)
    base, reason = 0, None
    kind = cursor_kind(params.format, rules)
    if params.since is not None:
        base, reason = since_base(params.since, session.id, path, ctx.entry_ids, kind)
        if base and rules == "omp" and not omp_context.prefix_unchanged(ctx.messages, base):
            base, reason = 0, "changed"
    shown = ctx.messages[base:] if base else ctx.messages
    if params.format == "llm":
        messages = omp_context.convert_to_llm(shown) if rules == "omp" else convert_to_llm(shown)
    else:
        messages = shown
    return wire.BuildContextResult(
        messages=messages,
        **_described(ctx),
        leafId=leaf,  # type: ignore[arg-type]
        estimatedTokens=context_tokens(ctx.messages, ctx.after_compaction),
        entryIds=ctx.entry_ids[base:] if base else ctx.entry_ids,
        cursor=make_cursor(session.id, leaf, ctx.entry_ids, kind),
        delta=params.since is not None and reason is None,
        baseCount=base,
        rebuildReason=reason,
        external=external.result_field(change),
    )


def _described(context: Any) -> dict[str, Any]:
    """What a context says beside its messages (a built one and a cached one name these alike)."""
    return {
        "thinkingLevel": context.thinking_level, "model": context.model, "models": context.models,
        "mode": context.mode, "modeData": context.mode_data, "injectedRules": context.injected_rules,
    }


def _kept_messages(cached: treecache.CachedContext) -> memoryview | None:
    try:
        return cached.json_messages()
    except treecache.CacheDamaged:
        return None  # built from the tree instead


def _decode_json(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:  # a lone surrogate escape, which msgspec refuses and JSON.parse keeps
        return json.loads(data)
