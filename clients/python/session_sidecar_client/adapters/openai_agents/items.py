"""Responses API input items to pi entries and back, exactly.

One entry per item. The items pi has a message for become that message:

- a user message (text only): a ``user`` message;
- an assistant output message (text only): an ``assistant`` message of ``text`` blocks;
- a ``function_call``: an ``assistant`` message holding one ``toolCall`` block;
- a ``function_call_output`` (a string output): a ``toolResult`` message;
- a ``reasoning`` item: an ``assistant`` message of ``thinking`` blocks (one per summary part).

What pi's message cannot hold (the item's ``id``, ``status``, a part's ``annotations``, the
exact ``arguments`` string...) goes in an ``openaiAgents`` patch on the message: the fields
to set and to drop over the item the message alone gives back (``natural``), per part where
the item has parts. No patch when the message alone gives the item back. Every other item
(images, files, hosted tool calls, system and developer messages...) is kept verbatim: a
``custom_message`` entry of customType ``openai-agents.item`` whose content is the item's JSON
(a custom message is in the context: a summary of the session sees it).

``from_message`` of the message ``to_entry`` made gives the item back: the patch holds every
field that differs from the natural item, part by part (the tests check every kind, and random
items against the SDK's SQLiteSession).

Reading a session pi or another agent wrote works too: its messages become the items they
naturally are (``from_message``), a compaction summary a user message worded as pi words it
for a model. A session the TypeScript adapter wrote (clients/typescript, adapters/openai-agents:
agents-core's items, its patch ``openaiAgentsJs``) reads so too, with the ``id`` and ``status``
its patch holds, and its verbatim items whose JSON is the same item here (a compaction, a system
message of text); its other verbatim items (agents-core's own shapes) are no item here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]  # (None without the C accelerator)
from json.encoder import encode_basestring as _encode_basestring
from typing import Any, cast

from ...client import loads_json
from ...protocol import AssistantMessage, CustomMessageEntry, MessageEntry, ToolResultMessage, UserMessage

ITEM_TYPE = "openai-agents.item"  # customType of an item kept verbatim
LEAF_TYPE = "openai-agents.leaf"  # customType of the marker pop_item and clear_session append
PATCH = "openaiAgents"  # the field of a message holding what pi cannot

# The TypeScript adapter (clients/typescript, adapters/openai-agents) keeps agents-core's items the
# same way, in agents-core's vocabulary (callId, function_call_result...): its patch and its verbatim
# items have their own names. A message it wrote reads here as its natural item, with the fields that
# mean the same in both vocabularies taken from its patch; a verbatim item of its, when its JSON is the
# same item in both (a compaction, a system message of text).
JS_ITEM_TYPE = "openai-agents-js.item"
JS_PATCH = "openaiAgentsJs"
_JS_KINDS = {
    "user": "user",
    "assistant": "assistant",
    "function_call": "function_call",
    "function_call_result": "function_call_output",
    "reasoning": "reasoning",
}
_PORTABLE = ("id", "status")

# How pi puts a summary in front of a model (convertToLlm); the sidecar words its llm-format contexts so.
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"

# json.dumps(value, separators=(",", ":"), ensure_ascii=False) without making its encoder for each call.
_json_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_compact_json: Callable[[object], str] = _json_encoder.encode
if _c_make_encoder is not None:
    # The C encoder that ``encode`` makes anew on each call (a microsecond, three times the encoding of a
    # call's small arguments), made once. Without the table of objects being encoded that ``encode`` keeps
    # to refuse a value holding itself: it encodes only values decoded from JSON, which cannot.
    _c_compact = _c_make_encoder(
        None,
        _json_encoder.default,
        _encode_basestring,
        None,
        _json_encoder.key_separator,
        _json_encoder.item_separator,
        False,
        False,
        True,
    )

    def _compact_json(value: object) -> str:
        return "".join(_c_compact(value, 0))


# The list of parts a kind of item has, patched part by part.
_PARTS = {"user": "content", "assistant": "content", "reasoning": "summary"}


def to_entry(item: Mapping[str, Any], call_names: Mapping[str, str]) -> MessageEntry | CustomMessageEntry:
    """The pi entry holding ``item``; ``call_names`` (call_id -> tool name) names a function_call_output's tool."""
    message = to_message(item, call_names)
    if message is not None:
        # A message built by _message: one of these three, with the patch as a field pi passes through.
        return {"type": "message", "message": cast("UserMessage | AssistantMessage | ToolResultMessage", message)}
    return verbatim_entry(item)


def plain_entry(entry: MessageEntry | CustomMessageEntry) -> bool:
    """Whether an entry ``to_entry`` made holds only values ``json.dumps`` writes as they are (exact str, int,
    bool, None, finite float, list, dict of str keys), so that any JSON encoder writes the same value.

    Only what came from the item unchecked can be anything else: its patch (the item's own fields) and a
    tool call's arguments (``json.loads`` reads NaN and Infinity); every other value the mapping checked
    is a str or made itself. A verbatim entry's item is already its JSON string."""
    if entry["type"] != "message":
        return True
    message = cast("Mapping[str, Any]", entry["message"])
    try:
        patch = message.get(PATCH)
        if patch is not None and not _plain(patch):
            return False
        content = message["content"]
        if type(content) is list and content and content[0]["type"] == "toolCall":
            return _plain(content[0]["arguments"])
    except RecursionError:  # (nested past what json encodes either: its encoder says so)
        return False
    return True


_SCALARS = frozenset({str, int, bool, type(None)})  # (exact types: json writes a subclass its own way)


def _plain(value: object) -> bool:
    kind = type(value)
    if kind in _SCALARS:
        return True
    # (Loops, not all() of a generator, and a scalar member checked without a call: most of a patch is strings.)
    if kind is dict:
        for key, inner in cast("dict[object, object]", value).items():
            if type(key) is not str or (type(inner) not in _SCALARS and not _plain(inner)):
                return False
        return True
    if kind is list:
        for inner in cast("list[object]", value):
            if type(inner) not in _SCALARS and not _plain(inner):
                return False
        return True
    if kind is float:
        return math.isfinite(cast(float, value))
    return False


def to_entries(
    items: list[dict[str, Any]], call_names: dict[str, str]
) -> tuple[list[MessageEntry | CustomMessageEntry], bool]:
    """``to_entry`` of each item (a function_call's tool name noted in ``call_names`` first, for an output
    later in the batch), and whether every entry is ``plain_entry``.

    The items of the kinds a run makes, in the shapes the SDK gives them (exact str and list values), take
    ``_direct``: their message and patch made as ``to_message`` makes them without building the natural item
    and diffing it whole (a third of ``to_entry``'s time on a large batch), their plainness read from the
    item's own values as they are patched. Any other item takes ``to_entry`` and ``plain_entry``."""
    entries: list[MessageEntry | CustomMessageEntry] = []
    append = entries.append
    plain = True
    for item in items:
        kind = item.get("type")
        if kind == "function_call" and isinstance(item.get("call_id"), str):
            call_names[item["call_id"]] = str(item.get("name", ""))
        made = _direct(item, call_names) if type(item) is dict else None
        if made is not None:
            append({"type": "message", "message": made[0]})  # type: ignore[typeddict-item]  # one of pi's three messages, as to_entry makes it
            plain = plain and made[1]
            continue
        entry = to_entry(item, call_names)
        append(entry)
        plain = plain and plain_entry(entry)
    return entries, plain


_MISSING: Any = object()


def _plain_value(value: object) -> bool:
    """``_plain`` of a value of the item's that a patch holds (False past the depth json encodes, as ``plain_entry``)."""
    try:
        return _plain(value)
    except RecursionError:
        return False


def _direct(item: dict[str, Any], call_names: Mapping[str, str]) -> tuple[dict[str, Any], bool] | None:
    """``to_message`` of an item of a mapped kind whose values are the exact types the SDK gives, and
    whether its entry is plain; None for any other item (``to_entry`` then makes it).

    The natural item's values are the item's own (the very objects, exact str) or constants, so ``_diff``
    of it against the item is: every key of the item the natural item lacks is set, the few keys that
    can differ are compared as ``_diff`` compares them, the parts patched part by part the same way, and
    the keys it has that the item lacks dropped (in the natural item's key order)."""
    kind = item_kind(item)
    if kind is None or type(item.get("type", "")) is not str:
        return None
    sets: dict[str, Any] = {}
    patch: dict[str, Any] = {}
    plain = True
    if kind == "function_call":
        call_id, name, text = item["call_id"], item["name"], item["arguments"]
        if type(call_id) is not str or type(name) is not str or type(text) is not str:
            return None
        arguments = _arguments(text)
        if not isinstance(arguments, dict):
            arguments = {}
        message: dict[str, Any] = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}],
        }
        plain = _plain_value(arguments)
        compact = _compact_json(arguments)
        for key, value in item.items():
            if key == "type" or key == "call_id" or key == "name" or (key == "arguments" and compact == value):
                continue
            sets[key] = value
    elif kind == "function_call_output":
        call_id, output = item["call_id"], item["output"]
        if type(call_id) is not str or type(output) is not str:
            return None
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": call_names.get(call_id, ""),
            "content": [{"type": "text", "text": output}],
            "isError": False,
        }
        for key, value in item.items():
            if key != "type" and key != "call_id" and key != "output":
                sets[key] = value
    elif kind == "user":
        content = item["content"]
        if type(item["role"]) is not str:
            return None
        if type(content) is str:
            message = {"role": "user", "content": content}
        else:
            parts = _part_patches(content, "input_text", None)
            if parts is None:
                return None
            message = {"role": "user", "content": [{"type": "text", "text": part["text"]} for part in content]}
            if parts:
                patch["parts"] = parts
        for key, value in item.items():
            if key != "role" and key != "content":
                sets[key] = value
    elif kind == "assistant":
        content = item["content"]
        if type(content) is str:
            blocks = [{"type": "text", "text": content}]
        else:
            parts = _part_patches(content, "output_text", "annotations")
            if parts is None:
                return None
            blocks = [{"type": "text", "text": part["text"]} for part in content]
            if parts:
                patch["parts"] = parts
        message = {"role": "assistant", "content": blocks}
        for key, value in item.items():
            if key == "role":
                if "assistant" != value:  # (the natural item's constants, compared as _diff compares them)
                    sets[key] = value
            elif key == "type":
                if "message" != value:
                    sets[key] = value
            elif key == "status":
                if "completed" != value:
                    sets[key] = value
            elif key == "content":
                if type(content) is str:
                    sets[key] = value  # (the natural item's content is a list of parts)
            else:
                sets[key] = value
    else:  # reasoning
        summary = item["summary"]
        parts = _part_patches(summary, "summary_text", None)
        if parts is None:
            return None
        message = {"role": "assistant", "content": [{"type": "thinking", "thinking": part["text"]} for part in summary]}
        if parts:
            patch["parts"] = parts
        for key, value in item.items():
            if key != "type" and key != "summary":
                sets[key] = value
    if patch:  # (parts: each part's own set values)
        for change in patch["parts"]:
            if change is not None:
                for key, value in change.get("set", {}).items():
                    if type(key) is not str or (type(value) not in _SCALARS and not _plain_value(value)):
                        plain = False
    if sets:
        patch["set"] = sets
        for key, value in sets.items():
            if type(key) is not str or (type(value) not in _SCALARS and not _plain_value(value)):
                plain = False
    if kind == "assistant":
        drop = [key for key in ("type", "status") if key not in item]
        if drop:
            patch["drop"] = drop
    elif kind == "reasoning" and not message["content"]:
        patch["kind"] = kind
    if patch:
        message[PATCH] = patch
    return message, plain


def _part_patches(parts: list[Any], kind: str, empty_list: str | None) -> list[dict[str, Any] | None] | None:
    """The ``parts`` of a patch over parts of ``kind`` (each ``type`` and ``text`` and, with ``empty_list``, that
    key's empty list in the natural part): one change or None per part, ``[]`` when no part differs; None (take
    ``to_entry``) when a part's values are not the exact types this reads them as."""
    if type(parts) is not list:
        return None
    changes: list[dict[str, Any] | None] = []
    differs = False
    for part in parts:
        if type(part) is not dict or type(part["type"]) is not str or type(part["text"]) is not str:
            return None
        sets: dict[str, Any] | None = None
        drop: list[str] | None = None
        if empty_list is not None:
            listed = part.get(empty_list, _MISSING)
            if listed is _MISSING:
                drop = [empty_list]
            elif type(listed) is not list:
                return None
        for key, value in part.items():
            if key == "type" or key == "text" or (key == empty_list and not value):
                continue
            if sets is None:
                sets = {}
            sets[key] = value
        if sets is None and drop is None:
            changes.append(None)
            continue
        change: dict[str, Any] = {}
        if sets is not None:
            change["set"] = sets
        if drop is not None:
            change["drop"] = drop
        changes.append(change)
        differs = True
    return changes if differs else []


def verbatim_entry(item: Mapping[str, Any]) -> CustomMessageEntry:
    """An item pi has no message for, kept as its JSON (as SQLiteSession keeps every item)."""
    return {"type": "custom_message", "customType": ITEM_TYPE, "content": json.dumps(item), "display": False}


def to_message(item: Mapping[str, Any], call_names: Mapping[str, str]) -> dict[str, Any] | None:
    """The pi message holding ``item`` exactly, or None when pi has no message that can."""
    kind = item_kind(item)
    if kind is None:
        return None
    message = _message(kind, item, call_names)
    natural = _natural(kind, message)
    patch = _diff(natural, item, _PARTS.get(kind))
    # The message stands for its kind by its shape (_infer_kind), except a reasoning item with
    # no summary (an assistant message with no blocks): say so.
    if kind == "reasoning" and not message["content"]:
        patch["kind"] = kind
    if patch:
        message[PATCH] = patch
    # from_message gives the item back: its kind is the patch's or the one the message's shape says
    # (this one), its natural item is this one, and _apply undoes _diff (every key that differs is set,
    # every key the item lacks dropped, part by part).
    return message


def item_kind(item: Mapping[str, Any]) -> str | None:
    """Which of the mapped kinds ``item`` is (by its shape, not only its type), or None."""
    kind = item.get("type")
    if kind == "function_call":
        if isinstance(item.get("call_id"), str) and isinstance(item.get("name"), str):
            return "function_call" if isinstance(item.get("arguments"), str) else None
        return None
    if kind == "function_call_output":
        return (
            "function_call_output"
            if isinstance(item.get("call_id"), str) and isinstance(item.get("output"), str)
            else None
        )
    if kind == "reasoning":
        summary = item.get("summary")
        if isinstance(summary, list) and _all_parts(summary, "summary_text"):
            return "reasoning"
        return None
    if kind not in (None, "message"):
        return None
    role = item.get("role")
    content = item.get("content")
    if role == "user":
        if isinstance(content, str) or (isinstance(content, list) and _all_parts(content, "input_text")):
            return "user"
    elif role == "assistant":
        if isinstance(content, str) or (isinstance(content, list) and content and _all_parts(content, "output_text")):
            return "assistant"
    return None


def from_message(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items a message of a context stands for: one for a message this adapter wrote."""
    patch = message.get(PATCH)
    if isinstance(patch, dict):
        kind = patch.get("kind") or _infer_kind(message)
        if isinstance(kind, str) and kind in _KINDS:
            return [_apply(_natural(kind, message), patch, _PARTS.get(kind))]
    role = message.get("role")
    if role == "custom" and message.get("customType") in (ITEM_TYPE, JS_ITEM_TYPE):
        try:
            kept = json.loads(message.get("content") or "null")
        except (TypeError, ValueError):
            kept = None
        if not isinstance(kept, dict):
            return []
        return [kept] if message.get("customType") == ITEM_TYPE or _shared_verbatim(kept) else []
    js_patch = message.get(JS_PATCH)
    js_kind = _JS_KINDS.get(str(js_patch.get("kind"))) if isinstance(js_patch, dict) else None
    kind = js_kind or _infer_kind(message)
    if kind is not None:
        item = _natural(kind, message)
        sets = js_patch.get("set") if isinstance(js_patch, dict) else None
        if isinstance(sets, dict):
            item.update({key: sets[key] for key in _PORTABLE if isinstance(sets.get(key), str)})
        return [item]
    return _foreign(message)


def _shared_verbatim(item: Mapping[str, Any]) -> bool:
    """Whether a verbatim item of the TypeScript adapter is the same item in the Responses API's vocabulary."""
    if item.get("type") == "compaction":
        return True
    return item.get("role") == "system" and isinstance(item.get("content"), str) and "type" not in item


# -- the message of an item, and the item a message naturally is ------------------------------


def _message(kind: str, item: Mapping[str, Any], call_names: Mapping[str, str]) -> dict[str, Any]:
    if kind == "user":
        content = item["content"]
        if isinstance(content, str):
            return {"role": "user", "content": content}
        return {"role": "user", "content": [{"type": "text", "text": part["text"]} for part in content]}
    if kind == "assistant":
        content = item["content"]
        texts = [content] if isinstance(content, str) else [part["text"] for part in content]
        return {"role": "assistant", "content": [{"type": "text", "text": text} for text in texts]}
    if kind == "function_call":
        arguments = _arguments(item["arguments"])
        call = {
            "type": "toolCall",
            "id": item["call_id"],
            "name": item["name"],
            "arguments": arguments if isinstance(arguments, dict) else {},
        }
        return {"role": "assistant", "content": [call]}
    if kind == "function_call_output":
        call_id = item["call_id"]
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": call_names.get(call_id, ""),
            "content": [{"type": "text", "text": item["output"]}],
            "isError": False,
        }
    # reasoning
    return {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": part["text"]} for part in item["summary"]],
    }


_KINDS = ("user", "assistant", "function_call", "function_call_output", "reasoning")


def _arguments(text: str) -> object:
    """A function call's arguments string read as JSON (None when it is not JSON): by msgspec where it is
    installed (~10x json's speed on a small object), which reads what json reads or refuses it (NaN,
    Infinity, a lone surrogate's escape), and then json reads it, as it always did."""
    try:
        return loads_json(text)  # (msgspec first where it is installed, as the client decodes its frames)
    except ValueError:
        return None


def _infer_kind(message: Mapping[str, Any]) -> str | None:
    """The kind a message without a patch stands for (None: not one item of ours)."""
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        if isinstance(content, str) or (
            isinstance(content, list) and all(_is_block(block, "text") for block in content)
        ):
            return "user"
        return None
    if role == "toolResult":
        if (
            isinstance(message.get("toolCallId"), str)
            and isinstance(content, list)
            and all(_is_block(block, "text") for block in content)
        ):
            return "function_call_output"
        return None
    if role != "assistant" or not isinstance(content, list) or not content:
        return None
    if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "toolCall":
        return "function_call"
    if all(_is_block(block, "text") for block in content):
        return "assistant"
    if all(_is_block(block, "thinking", "thinking") for block in content):
        return "reasoning"
    return None


def _natural(kind: str, message: Mapping[str, Any]) -> dict[str, Any]:
    """The item ``message`` alone gives back (its patch aside)."""
    content = message.get("content")
    blocks: list[object] = content if isinstance(content, list) else []
    if kind == "user":
        if isinstance(content, str):
            return {"role": "user", "content": content}
        return {
            "role": "user",
            "content": [
                {"type": "input_text", "text": block.get("text")} for block in blocks if isinstance(block, dict)
            ],
        }
    if kind == "assistant":
        parts: list[dict[str, object]] = [
            {"type": "output_text", "text": block.get("text"), "annotations": []}
            for block in blocks
            if isinstance(block, dict)
        ]
        return {"type": "message", "role": "assistant", "content": parts, "status": "completed"}
    if kind == "function_call":
        call = blocks[0] if blocks and isinstance(blocks[0], dict) else {}
        return {
            "type": "function_call",
            "call_id": call.get("id"),
            "name": call.get("name"),
            "arguments": _compact_json(call.get("arguments")),
        }
    if kind == "function_call_output":
        texts = [str(block.get("text")) for block in blocks if isinstance(block, dict)]
        return {"type": "function_call_output", "call_id": message.get("toolCallId"), "output": "\n".join(texts)}
    summary = [{"type": "summary_text", "text": block.get("thinking")} for block in blocks if isinstance(block, dict)]
    return {"type": "reasoning", "summary": summary}


def _foreign(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items a message this adapter did not write stands for (another agent's session, a summary)."""
    role = message.get("role")
    content = message.get("content")
    if role == "compactionSummary":
        text = COMPACTION_SUMMARY_PREFIX + str(message.get("summary")) + COMPACTION_SUMMARY_SUFFIX
        return [{"role": "user", "content": text}]
    if role == "branchSummary":
        return [
            {"role": "user", "content": BRANCH_SUMMARY_PREFIX + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX}
        ]
    if role == "assistant":  # text, thinking and tool calls in one message: an item each
        blocks = content if isinstance(content, list) else []
        return [item for block in blocks if isinstance(block, dict) for item in _foreign_block(block)]
    if role == "toolResult" and isinstance(message.get("toolCallId"), str):
        return [{"type": "function_call_output", "call_id": message["toolCallId"], "output": _text(content)}]
    if role == "system":
        return [{"role": "system", "content": _text(content)}]
    if role == "bashExecution":
        return [{"role": "user", "content": f"Ran `{message.get('command', '')}`\n{message.get('output', '')}"}]
    text = _text(content)
    return [{"role": "user", "content": text}] if text else []  # a user message with images, a custom message...


def _foreign_block(block: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        return [_natural("assistant", {"content": [block]})]
    if kind == "thinking":
        return [_natural("reasoning", {"content": [block]})]
    if kind == "toolCall":
        return [_natural("function_call", {"content": [block]})]
    return []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text")) for block in content if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def _all_parts(parts: list[object], kind: str) -> bool:
    """Whether every part is a dict of type ``kind`` with a str ``text`` (a loop: all() of a generator costs more)."""
    for part in parts:
        if not (isinstance(part, dict) and part.get("type") == kind and isinstance(part.get("text"), str)):
            return False
    return True


def _is_block(block: object, kind: str, field: str = "text") -> bool:
    return isinstance(block, dict) and block.get("type") == kind and isinstance(block.get(field), str)


# -- patches: what to set and drop over the natural item ---------------------------------------


def _diff(natural: Mapping[str, Any], actual: Mapping[str, Any], parts_key: str | None) -> dict[str, Any]:
    """The patch making ``natural`` into ``actual``: ``set``, ``drop``, and per part (``parts``) the same."""
    patch: dict[str, Any] = {}
    # (Loops, not comprehensions: an item has a handful of keys, and a comprehension's own frame costs more.)
    sets: dict[str, Any] = {}
    for key, value in actual.items():
        if key not in natural or natural[key] != value:
            sets[key] = value
    if parts_key is not None and parts_key in sets:
        ours, theirs = natural.get(parts_key), actual.get(parts_key)
        if (
            isinstance(ours, list)
            and isinstance(theirs, list)
            and len(ours) == len(theirs)
            and all(isinstance(part, dict) for part in theirs)
        ):
            patch["parts"] = [_diff(mine, part, None) or None for mine, part in zip(ours, theirs)]
            del sets[parts_key]
    if sets:
        patch["set"] = sets
    drop = [key for key in natural if key not in actual] if len(natural) > len(actual) - len(sets) else None
    if drop:
        patch["drop"] = drop
    return patch


def _apply(natural: dict[str, Any], patch: Mapping[str, Any], parts_key: str | None) -> dict[str, Any]:
    drop = patch.get("drop") or ()
    item = {key: value for key, value in natural.items() if key not in drop}
    parts = patch.get("parts")
    if parts_key is not None and isinstance(parts, list) and isinstance(item.get(parts_key), list):
        item[parts_key] = [
            _apply(part, change, None) if isinstance(change, dict) else part
            for part, change in zip(item[parts_key], parts)
        ]
    sets = patch.get("set")
    if isinstance(sets, dict):
        item.update(sets)
    return item
