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
from collections.abc import Mapping
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
_compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

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
