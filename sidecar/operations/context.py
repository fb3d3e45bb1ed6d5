"""``session/buildContext``: from the tree cache's bytes when they answer it, else built from the path."""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any

import msgspec

from .. import external, wire
from ..context import omp as omp_context
from ..context.build import build_context
from ..context.delta import make_cursor, since_base
from ..context.llm import convert_to_llm
from ..context.native import convert_with_native, native_summary
from ..context.tokens import context_tokens
from ..errors import InvalidParams
from ..store import Blobs, CacheDamaged, CachedContext, FileChange, Session, resolve

_has_blobs = attrgetter("has_blobs")


def cursor_kind(fmt: str, rules: str) -> str:
    """What a cursor was made for: a context of another format or other rules is not a base for a delta."""
    return fmt if rules == "pi" else f"{fmt}/{rules}"


def answer(
    session: Session, change: FileChange | None, params: wire.BuildContextParams, blobs: Blobs, raw_results: bool
) -> wire.BuildContextResult:
    check_target(params)
    leaf = session.leaf_id if params.leafId is msgspec.UNSET else params.leafId
    rules = params.rules or session.compat
    cached = session.cached_context if rules == session.compat else None
    kept = _kept_messages(cached) if cached is not None and cached.leaf_id == leaf else None
    if kept is not None and params.format == "agent" and params.since is None:
        assert cached is not None
        # A path never changes once written (the file is append-only), so neither does its context.
        return wire.BuildContextResult(
            messages=msgspec.Raw(kept) if raw_results else _decode_json(bytes(kept)),  # type: ignore[arg-type]  # Raw: the JSON kept, sent as it is
            **_described(cached),
            leafId=leaf,
            estimatedTokens=cached.estimated_tokens,
            entryIds=cached.entry_ids,
            cursor=make_cursor(session.id, leaf, cached.entry_ids, cursor_kind(params.format, rules)),
            delta=False,
            baseCount=0,
            external=external.result_field(change),
        )
    path = session.path_to(leaf)
    unique = session.tree.ids_unique
    ctx = omp_context.build_context(path, unique) if rules == "omp" else build_context(path, unique)
    # (after the build: each entry whose content it read knows whether it holds a blob reference)
    if any(map(_has_blobs, path)):  # in C: a path can hold 100,000s of entries
        resolve(ctx.messages, blobs)
    base, reason = 0, None
    kind = cursor_kind(params.format, rules)
    if params.format == "llm" and params.targetProvider is not None:
        kind += f"/for:{params.targetProvider}/{params.targetModel}"  # a delta only over a context for the same target
    if params.since is not None:
        base, reason = since_base(params.since, session.id, path, ctx.entry_ids, kind)
        if base and rules == "omp" and not omp_context.prefix_unchanged(ctx.messages, base):
            base, reason = 0, "changed"
    shown = ctx.messages[base:] if base else ctx.messages
    if params.format == "llm":
        native = None
        if params.targetProvider is not None and params.targetModel is not None:
            native = native_summary(path, shown, ctx.entry_ids[base:], params.targetProvider, params.targetModel)
        messages = convert_with_native(shown, omp_context.convert_to_llm if rules == "omp" else convert_to_llm, native)
    else:
        messages = shown
    return wire.BuildContextResult(
        messages=messages,
        **_described(ctx),
        leafId=leaf,
        estimatedTokens=context_tokens(ctx.messages, ctx.after_compaction),
        entryIds=ctx.entry_ids[base:] if base else ctx.entry_ids,
        cursor=make_cursor(session.id, leaf, ctx.entry_ids, kind),
        delta=params.since is not None and reason is None,
        baseCount=base,
        rebuildReason=reason,
        external=external.result_field(change),
    )


def check_target(params: wire.BuildContextParams) -> None:
    """targetProvider and targetModel come together, and only for an llm-format context."""
    if (params.targetProvider is None) != (params.targetModel is None):
        missing = "targetModel" if params.targetModel is None else "targetProvider"
        raise InvalidParams(
            f"{missing} is needed too: a provider's compaction item is only given to the model that wrote it",
            field=missing,
        )
    if params.targetProvider is not None and params.format != "llm":
        raise InvalidParams('targetProvider and targetModel apply to format "llm" only', field="format")


def _described(context: Any) -> dict[str, Any]:
    """What a context says beside its messages (a built one and a cached one name these alike)."""
    return {
        "thinkingLevel": context.thinking_level,
        "model": context.model,
        "models": context.models,
        "mode": context.mode,
        "modeData": context.mode_data,
        "injectedRules": context.injected_rules,
    }


def _kept_messages(cached: CachedContext) -> memoryview | None:
    try:
        return cached.json_messages()
    except CacheDamaged:
        return None  # built from the tree instead


def _decode_json(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:  # a lone surrogate escape, which msgspec refuses and JSON.parse keeps
        return json.loads(data)
