"""What goes to the model: pi's ``buildSessionContext``, over our entry tree.

Walk leaf -> root; derive the thinking level, model, mode and injected rules
from the path; emit messages, and when a compaction is on the path, only the
last one counts: its system message and summary first, then the entries it
kept (from ``firstKeptEntryId``, only if that entry is on the path; system
messages among them left out), then what follows. Context edits among the
emitted entries replace (or drop) their target's content, the last one of a
target winning. The shapes of the emitted messages are pi's AgentMessages,
field for field. The rules are pi 1.5's (protocol/PROTOCOL.md, "pi releases").
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import msgspec

from ..format.jsonl import Entry, MessageHead
from ..format.jstime import js_time
from .edits import NO_EDIT, edited, edits_among
from .pruned import PRUNE_CUSTOM_TYPE, pruned_ids, pruned_tool_result


@dataclass(slots=True)
class SessionContext:
    messages: list[dict[str, object]] = field(default_factory=list)
    thinking_level: str = "off"
    # pi's {provider, modelId}, from the last model_change or assistant message on the path.
    model: dict[str, object] | None = None
    # oh-my-pi's role -> "provider/modelId" map.
    models: dict[str, str] = field(default_factory=dict)
    mode: str = "none"
    mode_data: dict[str, object] | None = None
    injected_rules: list[str] = field(default_factory=list)
    # The entry each message came from (the compaction entry for its summary).
    entry_ids: list[str] = field(default_factory=list)
    # Index of the first message written after the latest compaction (0 without one).
    after_compaction: int = 0


def compaction_summary_message(obj: dict[str, object]) -> dict[str, object]:
    return {
        "role": "compactionSummary",
        "summary": obj.get("summary"),
        "tokensBefore": obj.get("tokensBefore"),
        "timestamp": js_time(obj.get("timestamp")),
    }


def branch_summary_message(obj: dict[str, object]) -> dict[str, object]:
    return {
        "role": "branchSummary",
        "summary": obj.get("summary"),
        "fromId": obj.get("fromId"),
        "timestamp": js_time(obj.get("timestamp")),
    }


def custom_message(obj: dict[str, object]) -> dict[str, object]:
    # JSON.stringify drops undefined fields: copy only what the entry has.
    message: dict[str, object] = {"role": "custom"}
    for key in ("customType", "content", "display", "details"):
        if key in obj:
            message[key] = obj[key]
    if message.get("content") is None:
        message["content"] = []  # pi 1.5: `content ?? []`
    message["timestamp"] = js_time(obj.get("timestamp"))
    return message


# pi 1.5 gives a message whose content is null or missing an empty one of its role's shape.
_EMPTY_CONTENT: dict[str, object] = {"user": [], "assistant": [], "toolResult": [], "system": ""}


def _normalised(message: dict[str, object]) -> dict[str, object]:
    role = message.get("role")
    if message.get("content") is None and isinstance(role, str) and role in _EMPTY_CONTENT:  # a list role: no shape
        return {**message, "content": _EMPTY_CONTENT[role]}
    return message


def message_of(entry: Entry, obj: dict[str, object] | None = None) -> dict[str, object] | None:
    """The AgentMessage an entry contributes, or None (settings, custom state, unknown types).

    ``obj``, when given, is the entry's line as a dict already (not decoded again).
    """
    if entry.type == "message":
        message = (obj if obj is not None else entry.obj()).get("message")
        return _normalised(message) if isinstance(message, dict) else None
    if entry.type == "custom_message":
        return custom_message(obj if obj is not None else entry.obj())
    if entry.type == "branch_summary":
        obj = obj if obj is not None else entry.obj()
        return branch_summary_message(obj) if obj.get("summary") else None
    return None


def _model_ref(source: dict[str, object], provider_key: str, model_key: str) -> dict[str, object]:
    """pi's ``{provider, modelId}`` from ``source``: a field the source lacks is
    absent (JSON.stringify drops undefined), one it holds as null stays null."""
    ref: dict[str, object] = {}
    if provider_key in source:
        ref["provider"] = source[provider_key]
    if model_key in source:
        ref["modelId"] = source[model_key]
    return ref


def _head_model_ref(head: MessageHead) -> dict[str, object]:
    """``_model_ref`` of an assistant message, from its head."""
    ref: dict[str, object] = {}
    if head.provider is not msgspec.UNSET:
        ref["provider"] = head.provider
    if head.model is not msgspec.UNSET:
        ref["modelId"] = head.model
    return ref


def _js_text(value: object) -> str:
    """A value as a JS template literal prints it (oh-my-pi builds "provider/model" that way)."""
    if value is msgspec.UNSET:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _split_model(value: str) -> dict[str, object]:
    provider, _, model_id = value.partition("/")
    return {"provider": provider, "modelId": model_id} if model_id else {"modelId": value}


def build_context(path: list[Entry], ids_unique: bool = False) -> SessionContext:
    """The context of a root -> leaf path (an empty path gives an empty context).

    ``ids_unique``: no id repeats on the path (the tree knows it), so the entry a compaction keeps from is
    looked for from the compaction back (a few steps) rather than from the root (``kept_from``).
    """
    ctx = SessionContext()
    compaction: Entry | None = None
    compaction_index = -1
    explicit_default_model = False
    rules: dict[str, None] = {}
    has_edits = False
    pruned: set[str] = set()  # toolResult entries shown as a placeholder (sidecar.context.pruned)
    # Every assistant message sets the model (and the default role's, until an explicit one), so only the
    # last one's counts: its head is kept and its values made once after the walk (a path can hold 100,000s).
    model_head: MessageHead | None = None  # set the model after the last model change
    default_head: MessageHead | None = None  # the last assistant before any explicit default
    for index, entry in enumerate(path):
        kind = entry.type
        if kind == "message":  # most of a path: tested first, its role read from the head the envelope holds
            head = entry.head
            if (head.role if head is not None else entry.role()) == "assistant":
                # read with the envelope: no second decode of the message (nor a call, most of the time)
                model_head = head if head is not None else entry.message_head()
                if not explicit_default_model:
                    default_head = model_head
                    if "default" not in ctx.models:
                        ctx.models["default"] = ""  # its place in the map (key order shows); the value below
        elif kind == "thinking_level_change":
            level = entry.obj().get("thinkingLevel")
            ctx.thinking_level = level if isinstance(level, str) else "off"
        elif kind == "model_change":
            obj = entry.obj()
            if isinstance(obj.get("model"), str):  # oh-my-pi
                role = given if isinstance(given := obj.get("role"), str) else "default"
                ctx.models[role] = obj["model"]
                if role == "default":
                    explicit_default_model = True
                    ctx.model, model_head = _split_model(obj["model"]), None
            else:  # pi
                ctx.model, model_head = _model_ref(obj, "provider", "modelId"), None
        elif kind == "compaction":
            compaction, compaction_index = entry, index
        elif kind == "context_edit":
            has_edits = True
        elif kind == "custom" and _PRUNE_MARK in entry.raw:
            pruned.update(pruned_ids(entry.obj()))
        elif kind == "ttsr_injection":
            injected = entry.obj().get("injectedRules")
            if isinstance(injected, list):
                rules.update((r, None) for r in injected if isinstance(r, str))
        elif kind == "mode_change":
            obj = entry.obj()
            ctx.mode = mode if isinstance(mode := obj.get("mode"), str) else "none"
            data = obj.get("data")
            ctx.mode_data = data if isinstance(data, dict) else None
    ctx.injected_rules = list(rules)
    if model_head is not None:
        ctx.model = _head_model_ref(model_head)
    if default_head is not None and not explicit_default_model:
        ctx.models["default"] = f"{_js_text(default_head.provider)}/{_js_text(default_head.model)}"

    if compaction is None:
        _emit(ctx, path, pruned, edits_among(path) if has_edits else {})
        return ctx
    comp = compaction.obj()
    first_kept = comp.get("firstKeptEntryId")
    kept_start = kept_from(path, first_kept, compaction_index, ids_unique)
    kept = [e for e in path[kept_start:compaction_index] if not (e.type == "message" and e.role() == "system")]
    after = path[compaction_index + 1 :]
    edits = edits_among(kept + after) if has_edits else {}
    opening = [compaction_summary_message(comp)]
    if comp.get("systemMessage") not in (None, False, ""):  # JS truthiness: {} counts
        opening.insert(0, comp["systemMessage"])
    for message in edited(opening, edits.get(compaction.id, NO_EDIT)):  # type: ignore[arg-type]  # an entry on a path has an id (Entry.id is Optional for the header)
        ctx.messages.append(message)
        ctx.entry_ids.append(compaction.id)  # type: ignore[arg-type]  # an entry on a path has an id (Entry.id is Optional for the header)
    _emit(ctx, kept, pruned, edits)
    ctx.after_compaction = len(ctx.messages)
    _emit(ctx, after, pruned, edits)
    return ctx


_PRUNE_MARK = PRUNE_CUSTOM_TYPE.encode()


def kept_from(path: list[Entry], first_kept: object, compaction_index: int, ids_unique: bool) -> int:
    """The index of the first entry before the compaction whose id is ``first_kept`` (the compaction's when none).

    From the root that reads every id string of a long path (cache misses: ~70 ms at 388,000 entries);
    when no id repeats, the only such entry is the first, and it is most often a few entries before.
    """
    if not ids_unique:
        return next((i for i in range(compaction_index) if path[i].id == first_kept), compaction_index)
    for index in range(compaction_index - 1, -1, -1):
        if path[index].id == first_kept:
            return index
    return compaction_index


def _emit(
    ctx: SessionContext,
    entries: Iterable[Entry],
    pruned: AbstractSet[str] = frozenset(),
    edits: dict[str, object] = {},  # noqa: B006  # (read, never changed)
) -> None:
    for entry in entries:
        message = message_of(entry)
        if message is not None and pruned and entry.id in pruned and message.get("role") == "toolResult":
            message = pruned_tool_result(message)
        if message is not None and edits and entry.id in edits:
            message = next(iter(edited([message], edits[entry.id])), None)
        if message is not None:
            ctx.messages.append(message)
            ctx.entry_ids.append(entry.id)  # type: ignore[arg-type]  # an entry on a path has an id (Entry.id is Optional for the header)
