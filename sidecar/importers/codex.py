"""Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``, as 0.169 writes them).

Every line is ``{"timestamp", "type", "payload"}`` (0.169 adds ``ordinal`` and ``metadata``).
The conversation is in the ``response_item`` lines, exactly as sent to the model; the
``event_msg`` lines repeat it for the UI (``item_completed`` of UserMessage, AgentMessage,
Reasoning, CommandExecution, ... and the older ``user_message``/``agent_message`` events),
so they are skipped as copies and the conversation is imported once. What becomes what:

- user ``message`` items: user messages; the context Codex injects as user turns
  (``<environment_context>``, AGENTS.md instructions, ``<turn_aborted>``) becomes
  ``custom_message`` entries (sent to the model, not shown); ``developer`` messages
  (permissions, skills, ``<model_switch>``) are kept as custom entries.
- ``reasoning``, assistant ``message``, ``function_call``, ``custom_tool_call`` (freeform
  ``apply_patch``), ``local_shell_call``, ``web_search_call`` items of one model response
  become one assistant message (thinking, text, tool calls); their outputs toolResults.
- ``turn_context`` / ``thread_settings_applied``: the model of what follows (a
  ``model_change`` entry when it changes).
- ``compacted``: a compaction entry whose summary is the compaction turn's reply (that
  assistant message is not imported a second time); Codex rebuilds its context from
  ``replacement_history`` (the earlier user messages), which pi cannot keep piecemeal:
  it is listed in the compaction's details.
- A subagent's rollout (``session_meta.source.subagent``, same folder tree) becomes a branch
  under the assistant message that spawned it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from .. import corepath
from ..format.entry import BLOB_MARK, Entry
from ..store import MAX_CHARS
from .codex_lines import (
    BOOKKEEPING,
    NOT_READ,
    OUTPUT,
    OUTPUT_ITEMS,
    REASONS,
    RESPONSE_ENDS,
    UI_EVENTS,
    Head,
    Line,
    decoder,
    item_line_decoder,
    line_decoder,
    model_decoder,
    model_line_decoder,
    read_lines,
)
from .codex_subagents import children
from .common import (
    KEPT,
    MAPPED,
    NO_USAGE,
    SKIPPED,
    UNKNOWN_KIND,
    Builder,
    Imported,
    Tally,
    id_of,
    image_block,
    iso_z,
    ms_of_iso,
    read_source,
)
from .made import TOOL_RESULT_HEAD, USER_HEAD, Assistant, assistant_head

TOOL = "codex"
API = "openai-responses"

CONTEXT_PREFIXES = (
    "<environment_context>",
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<INSTRUCTIONS>",
)
ASSISTANT_ITEMS = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
}
# What the compiled mapping (core/src/import_codex.rs, through corepath) maps a main rollout with.
VOCABULARY = corepath.CodexVocabulary(
    not_read=frozenset(NOT_READ),
    ui_events=frozenset(UI_EVENTS),
    response_ends=frozenset(RESPONSE_ENDS),
    output_items=frozenset(OUTPUT_ITEMS),
    assistant_items=frozenset(ASSISTANT_ITEMS),
    bookkeeping=BOOKKEEPING,
    context_prefixes=CONTEXT_PREFIXES,
    max_chars=MAX_CHARS,
    blob_mark=BLOB_MARK,
    no_usage=bytes(NO_USAGE),
    api=API,
    default_provider="openai",
    reasons={**REASONS, "unknown": UNKNOWN_KIND},
    entry_type=Entry,
    tool_result_head=TOOL_RESULT_HEAD,
    user_head=USER_HEAD,
    assistant_head=assistant_head,
)
# The assistant items mapped from their fields alone (with assistant messages): the others keep their whole item.
FROM_HEAD = {"reasoning", "function_call", "custom_tool_call"}


class _Reader:
    def __init__(self, builder: Builder, tally: Tally, prefix: str, provider: str) -> None:
        self.b, self.tally, self.prefix, self.provider = builder, tally, prefix, provider
        self.leaf: str | None = None
        self.open: Assistant | None = None  # the assistant message being filled
        self.tool_names: dict[str, str] = {}
        self.callers: dict[str, str] = {}  # call id -> entry id of its assistant message
        self.spawned: dict[str, str] = {}  # subagent thread id -> entry id of the spawning message
        self.model = ""

    def read_known(self, number: int, raw: memoryview, head: Head) -> None:
        """A line whose head says it is a response item or a turn's model (most of a rollout's lines that
        are not UI copies): mapped from the head, or decoded once more for what its kind needs, never into a
        ``Line`` first."""
        kind = head.type
        if kind == "response_item":
            item = head.payload
            assert item is not None  # a response_item's payload is an item (Head decodes it so)
            sub = item.type
            if sub in FROM_HEAD or sub == "message" and item.role == "assistant":
                # (most items of a rollout: mapped from the head, the line is not decoded again)
                self._assistant_fields(
                    f"{self.prefix}{number}",
                    iso_z(head.timestamp),
                    head.timestamp,
                    sub,
                    item.summary,
                    item.content,
                    item.encrypted_content,
                    item.call_id,
                    item.id,
                    item.name,
                    item.arguments,
                    item.input,
                    decoder.decode,
                )
                self.tally.count(f"response_item/{sub}", MAPPED)
                return
            self._item(
                f"{self.prefix}{number}",
                iso_z(head.timestamp),
                item_line_decoder.decode(raw).payload,
                head.timestamp,
                raw,
            )
            return
        self.open = None  # (a turn_context ends a model response)
        self.model = str(model_line_decoder.decode(raw).payload.model or self.model)
        self.tally.count(kind, MAPPED, REASONS["turn_model"])

    def read(self, number: int, line: Line) -> None:
        kind, payload = line.type, line.payload
        stamp = iso_z(line.timestamp)
        key = f"{self.prefix}{number}"
        if not isinstance(kind, str) or memoryview(payload)[:1] != b"{":
            self.tally.damage(number, 'a line without a string "type" and an object "payload"')
            return
        if kind in RESPONSE_ENDS:
            self.open = None  # one model response ends: the next assistant item starts another message
        if kind == "session_meta":
            self.tally.count(kind, MAPPED, REASONS["origin"])
            return
        if kind == "turn_context":
            self.model = str(model_decoder.decode(payload).model or self.model)
            self.tally.count(kind, MAPPED, REASONS["turn_model"])
            return
        if kind == "event_msg":  # the UI events nothing here reads were counted by read_lines without coming here
            event = decoder.decode(payload)
            sub = str(event.get("type"))
            if sub in RESPONSE_ENDS:
                self.open = None
            if sub == "thread_settings_applied":
                self.model = str((event.get("thread_settings") or {}).get("model") or self.model)
            if sub == "item_completed" and isinstance(event.get("item"), dict):
                self._note_spawn(event["item"])
            if sub in UI_EVENTS:
                self.tally.count(f"event_msg/{sub}", SKIPPED, REASONS["ui_copy"])
                return
            self._keep(key, stamp, f"event_msg/{sub}", line, known=False)
            return
        if kind == "compacted":
            self._compaction(key, stamp, decoder.decode(payload))
            return
        if kind == "response_item":
            self._item(key, stamp, decoder.decode(payload), line.timestamp, line)
            return
        if kind in BOOKKEEPING:
            self.tally.count(kind, SKIPPED, BOOKKEEPING[kind])
            return
        self._keep(key, stamp, kind, line, known=kind == "world_state")

    def _keep(self, key: str, stamp: str, kind: str, line: Line | memoryview, known: bool) -> None:
        if not isinstance(line, Line):
            line = line_decoder.decode(line)
        if known:
            self.tally.count(kind, KEPT, REASONS["kept"])
        else:
            self.tally.unknown(kind)
        # The payload goes into the entry as the JSON text it came as (decoded only when too long to keep whole).
        payload = line.payload if len(line.payload) <= MAX_CHARS else decoder.decode(line.payload)
        data = {"type": line.type, "timestamp": line.timestamp, "payload": payload}
        self.leaf = self.b.kept(key, self.leaf, stamp, f"codex.{kind}", data)

    def _note_spawn(self, item: dict[str, Any]) -> None:
        if item.get("type") == "CollabAgentToolCall" and item.get("tool") == "spawn_agent":
            caller = self.callers.get(str(item.get("id")))
            for thread in _listed(item.get("receiver_thread_ids")):
                if caller:
                    self.spawned[str(thread)] = caller

    def output(self, number: int, head: Head) -> None:
        """A tool's output as one string (most of a rollout's bytes): its JSON text goes into the
        toolResult as it is, never decoded and encoded again."""
        item = head.payload
        assert item is not None  # an OUTPUT line's head has its payload (read_lines checked it)
        self.open = None
        call = str(item.call_id or "")
        self.leaf = self.b.tool_result(
            f"{self.prefix}{number}",
            self.leaf,
            iso_z(head.timestamp),
            call,
            self.tool_names.get(call, ""),
            item.output,
            ms_of_iso(head.timestamp),
        )
        self.tally.count(f"response_item/{item.type}", MAPPED)

    def _item(self, key: str, stamp: str, item: dict[str, Any], timestamp: object, line: Line | memoryview) -> None:
        """``line``: the line, read as a ``Line`` or still its JSON text (read as one if it is kept)."""
        kind = str(item.get("type"))
        if kind == "message" and item.get("role") == "assistant" or kind in ASSISTANT_ITEMS:
            self._assistant_part(key, stamp, timestamp, item)
            self.tally.count(f"response_item/{kind}", MAPPED)
            return
        self.open = None
        if kind == "message":
            role = item.get("role")
            content = [b for b in (_input_block(b) for b in _listed(item.get("content"))) if b is not None]
            text = "".join(b.get("text", "") for b in content).lstrip()
            if role == "user" and not text.startswith(CONTEXT_PREFIXES):
                self.leaf = self.b.user(key, self.leaf, stamp, content, ms_of_iso(timestamp))
                self.tally.count("response_item/message:user", MAPPED)
            elif role == "user":
                self.leaf = self.b.custom_message(key, self.leaf, stamp, "codex.context", content)
                self.tally.count("response_item/message:user", MAPPED, REASONS["context"])
            else:
                self.leaf = self.b.kept(key, self.leaf, stamp, f"codex.{role}", item)
                self.tally.count(f"response_item/message:{role}", KEPT, REASONS["instructions"])
            return
        if kind in OUTPUT_ITEMS:
            call = str(item.get("call_id", ""))
            output = item.get("output")
            if isinstance(output, dict):  # older rollouts: {"content": ..., "success": ...}
                body, failed = output.get("content", ""), output.get("success") is False
            else:
                body, failed = output, False
            if isinstance(body, list):
                body = [b for b in (_input_block(b) for b in body) if b is not None]
            self.leaf = self.b.tool_result(
                key,
                self.leaf,
                stamp,
                call,
                self.tool_names.get(call, ""),
                body if isinstance(body, list) else str(body or ""),
                ms_of_iso(timestamp),
                failed,
            )
            self.tally.count(f"response_item/{kind}", MAPPED)
            return
        self._keep(key, stamp, f"response_item/{kind}", line, known=False)

    def _assistant_part(self, key: str, stamp: str, timestamp: object, item: dict[str, object]) -> None:
        kind = item.get("type")
        if kind in FROM_HEAD or kind == "message":
            self._assistant_fields(
                key,
                stamp,
                timestamp,
                kind,
                item.get("summary"),
                item.get("content"),
                item.get("encrypted_content"),
                item.get("call_id"),
                item.get("id"),
                item.get("name"),
                item.get("arguments"),
                item.get("input", ""),
                _same,
            )
            return
        message = self._opened(key, stamp, timestamp)
        call = str(item.get("call_id") or item.get("id") or "")
        arguments = {k: v for k, v in item.items() if k not in ("type", "id", "call_id", "status")}
        self._call(message, call, str(item.get("name") or kind), arguments)

    def _opened(self, key: str, stamp: str, timestamp: object) -> Assistant:
        """The assistant message the next part goes into: the open one, or a new one (after a model_change
        when the model differs). The time is read only for the part that opens a message:
        most add to one."""
        if self.open is None:
            parent = self.leaf
            if self.model:
                parent = self.b.model_change(f"{key}/model", parent, stamp, self.provider, self.model)
            self.open = self.b.assistant(
                key, parent, stamp, ms_of_iso(timestamp), API, self.provider, self.model, NO_USAGE, "stop"
            )
            self.leaf = self.open.id
        return self.open

    def _assistant_fields(
        self,
        key: str,
        stamp: str,
        timestamp: object,
        kind: object,
        summary: object,
        content: object,
        encrypted: object,
        call_id: object,
        item_id: object,
        name: object,
        arguments: object,
        tool_input: object,
        value: Callable[..., Any],
    ) -> None:
        """A reasoning, assistant message, function_call or custom_tool_call item's part of the open assistant
        message, from its fields; ``value`` reads a list field (JSON text from the head, or already read)."""
        message = self._opened(key, stamp, timestamp)
        if kind == "reasoning":
            texts = [s.get("text", "") for s in _listed(value(summary)) if isinstance(s, dict)]
            texts += [c.get("text", "") for c in _listed(value(content)) if isinstance(c, dict)]
            block: dict[str, object] = {"type": "thinking", "thinking": "\n\n".join(t for t in texts if t)}
            if encrypted:
                block["thinkingSignature"] = encrypted
            message.add(block)
        elif kind == "message":
            for part in _listed(value(content)):
                if isinstance(part, dict) and part.get("type") in ("output_text", "text"):
                    message.add({"type": "text", "text": str(part.get("text", ""))})
                elif isinstance(part, dict) and part.get("type") == "refusal":
                    message.add({"type": "text", "text": str(part.get("refusal", ""))})
        else:
            call = str(call_id or item_id or "")
            if kind == "function_call":
                try:
                    parsed = _json_text(arguments or "{}")
                except ValueError:
                    parsed = {"raw": arguments}
                if not isinstance(parsed, dict):
                    parsed = {"value": parsed}
            else:  # custom_tool_call
                parsed = {"input": tool_input}
            self._call(message, call, str(name or kind), parsed)

    def _call(self, message: Assistant, call: str, name: str, arguments: object) -> None:
        self.tool_names[call] = name
        self.callers[call] = message.id
        message.add({"type": "toolCall", "id": call, "name": name, "arguments": arguments})
        message.stop = "toolUse"

    def _compaction(self, key: str, stamp: str, payload: dict[str, Any]) -> None:
        text = str(payload.get("message") or "")
        summary = text
        # The compaction turn's reply is the summary (written as an assistant message just before): one copy only.
        last = self.b.by_id.get(self.leaf or "")
        if type(last) is Assistant:
            said = "".join(b.get("text", "") for b in last.blocks() if b.get("type") == "text")
            if said and text.endswith(said.strip()):
                summary = said
                self.leaf = last.parent
                self.b.entries.remove(last)
                del self.b.by_id[last.id]
                self.tally.count(
                    "response_item/message", SKIPPED, "the compaction's summary, imported as the compaction"
                )
                counts = self.tally.counts.get("response_item/message", {})
                counts[MAPPED] = counts.get(MAPPED, 1) - 1
        self.open = None
        history = _listed(payload.get("replacement_history"))
        entry = self.b.add(
            key,
            self.leaf,
            stamp,
            "compaction",
            summary=summary,
            firstKeptEntryId="",
            tokensBefore=0,
            details={
                "codex": {
                    "message": text,
                    "replacementHistory": [
                        {"type": h.get("type"), "role": h.get("role"), "id": h.get("id")}
                        for h in history
                        if isinstance(h, dict)
                    ],
                }
            },
        )
        self.b.dict_entry(entry)["firstKeptEntryId"] = entry  # Codex keeps earlier user turns piecemeal: see details
        self.leaf = entry
        self.tally.count("compacted", MAPPED)


def _same(value: object) -> object:
    return value


def _json_text(text: object) -> object:
    """The arguments a function call's JSON text holds, read as pi's JSON.parse would read them.

    By msgspec when it can (a tenth of the cost); what msgspec refuses goes to json, which reads a
    lone surrogate escape as JSON.parse does, refuses NaN and Infinity as it does (ValueError: the
    caller keeps the text as it came), and reads a number past a float's range as null (JSON.parse's
    Infinity, which pi writes as null). Arguments a rollout wrote as JSON themselves, not as their
    text (an object, a list), are taken as they are.
    """
    if not isinstance(text, (str, bytes)):
        return text
    try:
        return decoder.decode(text)
    except msgspec.DecodeError:
        pass
    return json.loads(text, parse_constant=_refused_constant, parse_float=_finite_or_null)


def _refused_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite_or_null(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _listed(field: object) -> list[Any]:
    """A field that holds a list (a message's content, a reasoning's summary), as its parts: anything else
    (a number, true, a string, an object: a damaged or foreign line) has none, where iterating it would fail."""
    return field if isinstance(field, list) else []


def _input_block(block: object) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "input_image":
        url = str(block.get("image_url", ""))
        if url.startswith("data:") and ";base64," in url:
            mime, data = url[5:].split(";base64,", 1)
            return image_block(data, mime)
        return {"type": "text", "text": f"[image: {url}]"}
    return {"type": "text", "text": json.dumps(block)}


def import_rollout(path: Path) -> Imported:
    path = Path(path)
    tally, builder = Tally(), Builder()
    spawned, meta = _read_main_rollout(path, builder, tally)
    # rollout-<time>-<thread id>.jsonl: the id is the last five dash-separated groups when the meta line is lost
    thread = str(meta.get("id") or "-".join(path.stem.split("-")[-5:]))
    imported = Imported(
        TOOL, thread, str(path), str(meta.get("cwd") or ""), iso_z(meta.get("timestamp")), builder.entries, tally
    )
    subagents = []
    for child in children(path, thread):
        sub = Builder()
        sub.ids = builder.ids
        anchor = spawned.get(child[1]) or (id_of(builder.entries[0]) if builder.entries else None)
        head = sub.custom(
            f"{child[0].name}:head",
            anchor,
            imported.timestamp,
            "codex.subagent",
            {"threadId": child[1], "file": child[0].name, "source": child[2].get("source")},
        )
        _read_rollout_into(child[0], sub, tally, f"{child[0].name}:", head)
        tally.count("subagent rollout", MAPPED)
        builder.insert_after(anchor, sub.entries)
        subagents.append(str(child[0]))
    builder.finish()
    if subagents:
        imported.extra["subagents"] = subagents
    return imported


def _read_main_rollout(path: Path, builder: Builder, tally: Tally) -> tuple[dict[str, str], dict[str, object]]:
    """The main rollout into ``builder``: (the subagent threads it spawned, its session_meta payload). Mapped by
    the chosen core: the compiled one maps the whole file or none of it (then the Python reader does)."""
    data = read_source(path)
    try:
        mapped = corepath.codex_mapping(VOCABULARY).map(data)
        if mapped is not None:
            builder.adopt(mapped.entries)
            tally.counted(mapped.counts, mapped.unrecognised)
            meta = {} if mapped.meta is None else decoder.decode(data[mapped.meta[0] : mapped.meta[1]])
            return {}, meta  # (a rollout that spawns a subagent is one the compiled mapping refuses)
    finally:
        if not isinstance(data, bytes):
            data.close()
    reader, meta = _read_rollout_into(path, builder, tally, "", None)
    return reader.spawned, meta


def _read_rollout_into(
    path: Path, builder: Builder, tally: Tally, prefix: str, head: str | None
) -> tuple[_Reader, dict[str, object]]:
    reader = _Reader(builder, tally, prefix, "openai")
    reader.leaf = head
    meta: dict[str, object] = {}
    for number, raw, line, line_head in read_lines(path, tally, reader):
        if isinstance(line, str):  # OUTPUT or KNOWN: the head says what the line is
            if line is OUTPUT:
                reader.output(number, line_head)  # type: ignore[arg-type]  # read_lines gives OUTPUT with its head
            else:
                reader.read_known(number, raw, line_head)  # type: ignore[arg-type]  # and KNOWN with its head too
            continue
        if not meta and line.type == "session_meta" and memoryview(line.payload)[:1] == b"{":
            meta = decoder.decode(line.payload)
            reader.provider = str(meta.get("model_provider") or "openai")
        reader.read(number, line)
    return reader, meta
