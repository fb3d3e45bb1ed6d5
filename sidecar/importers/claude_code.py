"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``, as 2.1 writes them).

Records with a ``uuid`` form a tree through ``parentUuid``; everything else is
bookkeeping. What becomes what:

- ``user`` lines: the prompt as a user message; ``tool_result`` blocks as toolResult
  messages (named after their ``tool_use``); the compaction's summary line
  (``isCompactSummary``) becomes the compaction's summary, not a message; harness
  lines (``isMeta``, local command echoes) are kept as custom entries.
- ``assistant`` lines: Claude Code writes one content block per line; lines of one
  API message (same ``message.id``) become one assistant message, in order.
- ``system`` ``compact_boundary``: a compaction entry under ``logicalParentUuid``
  (the boundary itself has no parent), keeping ``compactMetadata.preservedMessages``
  from the first preserved one; other ``system`` lines and ``attachment`` lines are kept.
- ``api-request-blob`` (copies of messages sent), ``api-request``, ``api-request-shape``,
  ``queue-operation`` and ``last-prompt`` (the prompt again) are skipped as copies;
  ``cost-state``, ``mode``, ``tools-used`` and anything unknown are kept as custom entries.
- Subagent transcripts (``<session>/subagents/agent-<id>.jsonl`` + ``.meta.json``, as 2.1 writes
  them; ``agent-<id>.jsonl`` beside the transcript, as 2.0 did) become a branch under the assistant
  message that called the ``Agent`` (or ``Task``) tool, so the main path never holds them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from ..store import MAX_CHARS
from .claude_code_lines import (
    COPIES,
    LIST,
    OBJECT,
    STRING,
    BlockHead,
    Message,
    Record,
    block_decoder,
    block_heads_decoder,
    block_list_decoder,
    decoder,
    first_byte,
    read_records,
)
from .common import (
    KEPT,
    MAPPED,
    SKIPPED,
    Builder,
    Imported,
    Tally,
    id_of,
    image_block,
    iso_z,
    json_bytes,
    ms_of_iso,
    usage,
)

TOOL = "claude-code"
API, PROVIDER = "anthropic-messages", "anthropic"

_STOPS = {"tool_use": "toolUse", "max_tokens": "length"}  # Anthropic's stop reasons pi names otherwise
KEPT_KINDS = {
    "attachment",
    "cost-state",
    "mode",
    "tools-used",
    "atis-latch",
    "summary",
    "custom-title",
    "file-history-snapshot",
    "progress",
    "system",
    "tag",
    "agent-name",
    "pr-link",
}


class _Reader:
    def __init__(self, builder: Builder, tally: Tally, prefix: str) -> None:
        self.b, self.tally, self.prefix = builder, tally, prefix
        self.alias: dict[str, str] = {}  # source uuid -> id of the entry standing for it
        self.tool_names: dict[str, str] = {}  # tool_use id -> tool name
        self.tool_users: dict[str, str] = {}  # tool_use id -> entry id of its assistant message
        # A subagent's id -> the tool_use that started it, from the call's result (toolUseResult.agentId):
        # what ties a 2.0 transcript to its agents' files, which carry no toolUseId of their own.
        self.agent_calls: dict[str, str] = {}
        self.open_assistant: tuple[str, str] | None = None  # (message.id, entry id) being filled
        self.last: str | None = None  # the entry written last (parent of records without a uuid)
        self.model: str | None = None
        # Records without a uuid (cost-state, mode, ...) are chained in after the entry written before them;
        # a later child of that entry hangs below them, so they never fork the path.
        self.after: dict[str, str] = {}
        # The compaction entry waiting for its summary (the isCompactSummary user line after the boundary).
        self.pending_compaction: str | None = None

    def parent_of(self, record: Record) -> str | None:
        source = record.parentUuid or record.logicalParentUuid
        if source is None:
            return None
        return self._below(self.alias.get(source, self.last))

    def _below(self, entry: str | None) -> str | None:
        while entry is not None and entry in self.after:
            entry = self.after[entry]
        return entry

    def read(self, number: int, record: Record) -> None:
        kind = record.type
        if not isinstance(kind, str):
            self.tally.damage(number, 'a record without a string "type"')
            return
        if kind in COPIES:
            self.tally.count(kind, SKIPPED, COPIES[kind])
            return
        uid = record.uuid
        stamp = iso_z(record.timestamp)
        message = record.message
        if kind == "assistant" and isinstance(message, Message):
            self.assistant(record, message, uid, stamp)
            return
        self.open_assistant = None
        if kind == "user" and isinstance(message, Message):
            self.user(record, message, uid, stamp)
        elif kind == "system" and record.subtype == "compact_boundary":
            self.compaction(record, uid, stamp)
        else:
            if kind not in KEPT_KINDS:
                self.tally.unknown(kind)
            else:
                self.tally.count(kind, KEPT, "kept as a custom entry (not part of the model's context)")
            parent = self.parent_of(record) if uid else self._below(self.last)
            entry = self.b.kept(f"{self.prefix}{uid or number}", parent, stamp, f"claude-code.{kind}", record.whole())
            if not uid and parent is not None:
                self.after[parent] = entry
            self._stand(uid, entry)

    def _stand(self, uid: str | None, entry: str) -> None:
        if uid:
            self.alias[uid] = entry
        self.last = entry

    def user(self, record: Record, message: Message, uid: str | None, stamp: str) -> None:
        raw_content, ms = message.content, ms_of_iso(record.timestamp)
        parent = self.parent_of(record)
        if record.isCompactSummary and self.pending_compaction is not None:
            content = decoder.decode(raw_content)
            compaction = self.b.dict_entry(self.pending_compaction)
            compaction["summary"] = content if isinstance(content, str) else _text(content)
            self.tally.count("user", MAPPED, None)
            self._stand(uid, self.pending_compaction)
            self.pending_compaction = None
            return
        # A list of blocks stays undecoded here: each block is read for what it is (a tool result's output
        # goes through as the JSON text it came as). A list of tool results only (nearly every user line that
        # is a list: a tool's answer) is read in one decoding, as their heads.
        is_list = first_byte(raw_content) == LIST
        results = _tool_results_only(raw_content) if is_list else None
        content = (
            None
            if results is not None
            else block_list_decoder.decode(raw_content)
            if is_list
            else decoder.decode(raw_content)
        )
        text = content if isinstance(content, str) else None
        if record.isMeta or (text is not None and text.lstrip().startswith(("<local-command-", "<command-name>"))):
            self.tally.count("user", KEPT, "harness lines (isMeta, local command echoes) the model never saw")
            self._stand(uid, self.b.kept(f"{self.prefix}{uid}", parent, stamp, "claude-code.user", record.whole()))
            return
        self.tally.count("user", MAPPED)
        if is_list:
            if results is not None:
                rest: list[object] = []
            else:
                blocks = [
                    (block_decoder.decode(b), b)
                    for b in content  # type: ignore[union-attr]  # a list with no results: content holds its blocks
                    if first_byte(b) == OBJECT
                ]
                results = [head for head, _ in blocks if head.type == "tool_result"]
                rest = [_block(decoder.decode(b)) for head, b in blocks if head.type != "tool_result"]
            details = record.tool_use_result() if len(results) == 1 else None
            if details is not None and b'"agentId"' in bytes(details):
                self._started_agent(details, results[0])
            for index, block in enumerate(results):
                call = str(block.tool_use_id if block.tool_use_id is not None else "")
                body = block.content
                if first_byte(body) == STRING and len(body) <= MAX_CHARS:
                    text_or_blocks: object = body  # the output's JSON text as it came
                else:
                    decoded = decoder.decode(body)
                    text_or_blocks = (
                        [_block(b) for b in decoded if isinstance(b, dict)]
                        if isinstance(decoded, list)
                        else str(decoded or "")
                    )
                parent = self.b.tool_result(
                    f"{self.prefix}{uid}/{index}",
                    parent,
                    stamp,
                    call,
                    self.tool_names.get(call, ""),
                    text_or_blocks,
                    ms,
                    bool(block.is_error),
                    details,
                )
            rest = [b for b in rest if b is not None]
            if rest or not results:
                parent = self.b.user(f"{self.prefix}{uid}", parent, stamp, rest, ms)
        else:
            parent = self.b.user(f"{self.prefix}{uid}", parent, stamp, content or "", ms)
        self._stand(uid, parent)  # type: ignore[arg-type]  # a user or tool result entry was written: its id

    def _started_agent(self, details: object, result: BlockHead) -> None:
        decoded = decoder.decode(details) if isinstance(details, msgspec.Raw) else details
        agent = decoded.get("agentId") if isinstance(decoded, dict) else None
        if isinstance(agent, str) and result.tool_use_id is not None:
            self.agent_calls[agent] = str(result.tool_use_id)

    def assistant(self, record: Record, message: Message, uid: str | None, stamp: str) -> None:
        blocks, calls = [], []
        for source in decoder.decode(message.content) or ():
            block = _assistant_block(source)
            if block is not None:
                blocks.append(block)
                if block["type"] == "toolCall":
                    calls.append(block)
                    self.tool_names[block["id"]] = block["name"]
        model = str(message.model or self.model or "")
        msg_id = message.id
        if self.open_assistant is not None and msg_id and self.open_assistant[0] == msg_id:
            entry = self.b.being_filled(self.open_assistant[1])
            for block in blocks:
                entry.add(block)
            if calls:
                entry.stop = "toolUse"
            self.tally.count("assistant", MAPPED)
            self._stand(uid, entry.id)
        else:
            parent = self.parent_of(record)
            if model and model != "<synthetic>" and self.b.model != (PROVIDER, model):
                parent = self.b.model_change(f"{self.prefix}{uid}/model", parent, stamp, PROVIDER, model)
            use = decoder.decode(message.usage)
            if not isinstance(use, dict):
                use = {}
            stop = _STOPS.get(message.stop_reason, None)
            opened = self.b.assistant(
                f"{self.prefix}{uid}",
                parent,
                stamp,
                ms_of_iso(record.timestamp),
                API,
                PROVIDER,
                model,
                msgspec.Raw(
                    json_bytes(
                        usage(
                            int(use.get("input_tokens") or 0),
                            int(use.get("output_tokens") or 0),
                            int(use.get("cache_read_input_tokens") or 0),
                            int(use.get("cache_creation_input_tokens") or 0),
                        )
                    )
                ),
                stop if stop is not None else "toolUse" if calls else "stop",
            )
            for block in blocks:
                opened.add(block)
            entry_id = opened.id
            self.open_assistant = (msg_id, entry_id) if msg_id else None
            self.tally.count("assistant", MAPPED)
            self._stand(uid, entry_id)
        for block in calls:
            self.tool_users[block["id"]] = self.alias[uid] if uid else self.last  # type: ignore[assignment]  # an assistant entry was written: last is its id
        self.model = model or self.model

    def compaction(self, record: Record, uid: str | None, stamp: str) -> None:
        whole = decoder.decode(record.line)
        # (each read as far as it has the shape Claude Code writes: a damaged line still gives its compaction)
        meta = whole.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        kept = meta.get("preservedMessages")
        preserved = kept.get("uuids") if isinstance(kept, dict) else None
        preserved = preserved if isinstance(preserved, list) else []
        try:
            tokens_before = int(meta.get("preTokens") or 0)
        except (TypeError, ValueError, OverflowError):
            tokens_before = 0
        parent = self.parent_of(record)
        entry_id = self.b.add(
            f"{self.prefix}{uid}",
            parent,
            stamp,
            "compaction",
            summary=str(whole.get("content") or ""),
            firstKeptEntryId="",
            tokensBefore=tokens_before,
            details={"claudeCode": {"trigger": meta.get("trigger"), "preservedUuids": preserved}},
        )
        first = self.alias.get(preserved[0]) if preserved and isinstance(preserved[0], str) else None
        self.b.dict_entry(entry_id)["firstKeptEntryId"] = first or entry_id  # nothing kept: its own id
        self.pending_compaction = entry_id
        self.tally.count("system/compact_boundary", MAPPED)
        self._stand(uid, entry_id)


def _tool_results_only(raw_content: msgspec.Raw) -> list[BlockHead] | None:
    """The blocks of a list that holds tool results only, read in one decode; None for any other list."""
    try:
        heads = block_heads_decoder.decode(raw_content)
    except msgspec.ValidationError:
        return None  # an element that is no object: read block by block
    for head in heads:
        if head.type != "tool_result":
            return None
    return heads


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return str(content or "")


def _block(block: dict[str, Any]) -> dict[str, object] | None:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image":
        source = block.get("source") or {}
        if source.get("type") == "base64":
            return image_block(str(source.get("data", "")), str(source.get("media_type", "image/png")))
        return {"type": "text", "text": f"[image: {json.dumps(source)}]"}
    return {"type": "text", "text": json.dumps(block)}


def _assistant_block(block: object) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if block.get("signature"):
            out["thinkingSignature"] = block["signature"]
        return out
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "thinkingSignature": block.get("data", ""), "redacted": True}
    if kind in ("tool_use", "server_tool_use"):
        return {
            "type": "toolCall",
            "id": str(block.get("id", "")),
            "name": str(block.get("name", "")),
            "arguments": block.get("input") if isinstance(block.get("input"), dict) else {},
        }
    return {"type": "text", "text": json.dumps(block)}


def import_transcript(path: Path) -> Imported:
    path = Path(path)
    tally, builder = Tally(), Builder()
    reader = _Reader(builder, tally, "")
    session_id, cwd, first_stamp = path.stem, "", None
    # Older releases wrote a Task's subagent inline (isSidechain): each run becomes a branch after the main
    # entry written before it, so the main path and pi's leaf (the file's last line) never hold it.
    sidechains: list[tuple[str | None, list[tuple[int, Record]]]] = []
    for number, record in read_records(path, tally):
        if record.isSidechain is True and record.uuid:
            if record.parentUuid is None or not sidechains:
                sidechains.append((reader._below(reader.last), []))
            sidechains[-1][1].append((number, record))
            continue
        if not cwd and isinstance(record.cwd, str):
            cwd = record.cwd
        if isinstance(record.sessionId, str):
            session_id = record.sessionId
        if first_stamp is None and isinstance(record.timestamp, str):
            first_stamp = record.timestamp
        reader.read(number, record)
    for index, (anchor, records) in enumerate(sidechains):
        _branch(builder, tally, anchor, f"sidechain{index}:", {"sidechain": index}, records)
    subagents = _subagents(path, builder, tally, reader)
    builder.finish()
    imported = Imported(TOOL, session_id, str(path), cwd, iso_z(first_stamp), builder.entries, tally)
    if subagents:
        imported.extra["subagents"] = subagents
    return imported


def _branch(
    builder: Builder, tally: Tally, anchor: str | None, prefix: str, head_data: dict, records: list[tuple[int, Record]]
) -> None:
    """Records of a subagent as a branch under ``anchor``, placed right after it in the file."""
    if anchor is None and builder.entries:
        anchor = id_of(builder.entries[0])
    sub = Builder()
    sub.ids = builder.ids
    reader = _Reader(sub, tally, prefix)
    stamp = iso_z(records[0][1].timestamp) if records else iso_z(None)
    head = sub.custom(f"{prefix}head", anchor, stamp, "claude-code.subagent", head_data)
    reader.last = head
    reader.alias["\0head"] = head
    for number, record in records:
        if record.parentUuid is None and record.uuid:
            record = msgspec.structs.replace(record, parentUuid="\0head", rehomed=True)
        reader.read(number, record)
    tally.count("subagent transcript", MAPPED)
    builder.insert_after(anchor, sub.entries)


def _subagents(path: Path, builder: Builder, tally: Tally, main: _Reader) -> list[str]:
    """Each subagent transcript as a branch under the message that started it, placed right after it.

    Claude Code 2.1 keeps them in ``<session>/subagents/agent-<id>.jsonl`` with a ``.meta.json`` naming
    the tool call; 2.0 wrote ``agent-<id>.jsonl`` beside the transcript, in the project folder every
    session of the project shares, tied to its call only by the call's result (``toolUseResult.agentId``).
    Beside the transcript, only the agents this session's calls started are read: the others belong to
    other sessions, or are the cache-warming "Warmup" agents 2.0 started with every session, which
    were never part of a conversation."""
    found = []
    folder = path.with_suffix("") / "subagents"
    nested = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    for transcript in nested:
        meta_path = transcript.with_suffix(".meta.json")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        except ValueError:
            meta = {}
            tally.damage(0, f"{meta_path.name}: not JSON")
        anchor = main.tool_users.get(str(meta.get("toolUseId", "")))
        _subagent(builder, tally, transcript, anchor, meta)
        found.append(str(transcript))
    nested_ids = {transcript.stem.removeprefix("agent-") for transcript in nested}
    for agent, call in sorted(main.agent_calls.items()):
        beside = path.parent / f"agent-{agent}.jsonl"
        if agent in nested_ids or "/" in agent or not beside.is_file():
            continue
        _subagent(builder, tally, beside, main.tool_users.get(call), {"toolUseId": call})
        found.append(str(beside))
    return found


def _subagent(builder: Builder, tally: Tally, transcript: Path, anchor: str | None, meta: dict) -> None:
    records = list(read_records(transcript, tally))
    _branch(
        builder,
        tally,
        anchor,
        f"{transcript.name}:",
        {"agentId": transcript.stem.removeprefix("agent-"), "file": transcript.name, **meta},
        records,
    )
