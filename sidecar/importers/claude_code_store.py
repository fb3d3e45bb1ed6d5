"""Claude Code transcript lines appended a batch at a time (``session/appendForeign``), mapped as the
importer maps a whole transcript (claude_code.py), each line also kept verbatim.

A batch's lines go through the importer's reader, carried over from the batches before: a later
line's ``parentUuid`` finds the entry standing for an earlier batch's line. Each line is then kept as it
came in a ``custom`` entry (customType ``claude-code.line``, data ``{"line": ..., "subpath"?: ...}``:
pi never sends a custom entry to the model), chained in right below what the line mapped to, so the
main path runs user message, its line, assistant message, its line... and the verbatim lines read back
in file order are the transcript as appended (``lines_of``).

What the mapping carries from batch to batch is rebuilt from the stored entries alone
(``Transcripts.of_entries``): which entry stands for each uuid (a line entry's parent), what was chained
in below what, the tool calls' names and callers and the model, from the verbatim lines; and what the
last line left open. Claude Code writes one content block a line, so an API message's lines may be
split over two batches (the SDK's eager flush), and so may a compaction's boundary and summary lines:
the message (or compaction) an earlier batch wrote is then written again whole, with what the new lines
add, below the same parent, and the path goes on from the new one (the earlier one stays, on a branch:
nothing is changed or erased). tests/importers/test_claude_code_store.py checks that a mapping rebuilt
after any batch goes on exactly as the one kept in memory.

Subagent transcripts (``subpath``, e.g. ``subagents/agent-<id>``) are kept in the same session as a
branch under the assistant message that called the ``Agent``/``Task`` tool, as the importer places them:
a ``claude-code.subagent`` head, then their lines. The call is known from the transcript's
``agent_metadata`` line (the ``.meta.json`` the SDK mirrors) or a tool result's ``agentId``; else the
head hangs at the main path's end. Since a reopened session's leaf is its last entry, a subagent batch
is followed by a ``claude-code.main`` marker below the main path's end, so the leaf stays there.

A subpath's lines deleted (``deleted``) are not erased: a ``claude-code.deleted`` entry says the lines
of that subpath before it are gone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from ..format.codec import decode_lenient, decode_object
from ..format.codec import encode as json_bytes
from ..format.entry import Entry
from .claude_code import PROVIDER, _Reader
from .claude_code_lines import COPIES, loose_record_decoder, record_decoder
from .common import Builder, Tally, iso_of_ms, ms_of_iso

LINE = "claude-code.line"
SUBAGENT = "claude-code.subagent"
MAIN = "claude-code.main"
DELETED = "claude-code.deleted"
STATE = "claude-code.state"
# The custom entries this module writes besides the importer's own ``claude-code.<kind>`` ones.
OWN = frozenset({LINE, SUBAGENT, MAIN, DELETED, STATE})
HEAD = "\0head"  # the alias of a subagent transcript's head (claude_code._branch's)


class _Transcript:
    """One transcript's mapping state: the main one (subpath None) or a subagent's."""

    def __init__(self, subpath: str | None, after: dict[str, str]) -> None:
        self.subpath = subpath
        self.reader = _Reader(Builder(), Tally(), "" if subpath is None else f"{subpath}:")
        # Entry ids are the session's: one map of what was chained in below what serves every transcript.
        self.reader.after = after
        self.uuids: set[str] = set()
        self.head: str | None = None  # a subagent's head entry
        self.model_written: tuple[str, str] | None = None  # the last model_change's (Builder.model)
        self.count = 0  # lines kept (numbers the keys of lines without a uuid)
        # Carried over a batch's end, as stored: the assistant message the last line added to (its API
        # message id and entry), and the compaction waiting for its summary line.
        self.open_message: tuple[str, dict[str, Any]] | None = None
        self.pending: dict[str, Any] | None = None

    def superseded(self, old: str, new: str) -> None:
        """Entry ``new`` stands where ``old`` stood (an earlier batch's message or compaction written again)."""
        reader = self.reader
        for table in (reader.alias, reader.tool_users):
            for name, entry in table.items():
                if entry == old:
                    table[name] = new
        if reader.last == old:
            reader.last = new

    def carry(self, line: dict[str, Any], stands: dict[str, Any] | None) -> None:
        """What the last line leaves open for the next batch (``stands``: the entry it stands for)."""
        kind, message = line.get("type"), line.get("message")
        if kind in COPIES:
            return  # (the reader skips them before anything)
        if kind == "system" and line.get("subtype") == "compact_boundary" and stands is not None:
            self.pending = stands if stands.get("type") == "compaction" else None
        elif kind == "user" and line.get("isCompactSummary"):
            self.pending = None
        if kind == "assistant" and isinstance(message, dict) and isinstance(message.get("id"), str) and message["id"]:
            is_message = stands is not None and stands.get("type") == "message"
            self.open_message = (message["id"], stands) if is_message else None  # type: ignore[assignment]  # is_message: stands is a dict
        else:
            self.open_message = None

    def end(self) -> str | None:
        """The entry the next chained-in entry goes below."""
        reader = self.reader
        return reader._below(reader.last)

    def chain(self, parent: str | None, entry: str) -> None:
        """``entry`` was written below ``parent`` as a chained-in entry: children of ``parent`` go below it."""
        if parent is None:
            if self.reader.last is None:
                self.reader.last = entry
        else:
            self.reader.after[parent] = entry

    def saw_line(self, line: dict[str, Any], stands: str) -> None:
        """What the mapping reads later from a line already kept (rebuilding: ``Transcripts.of_entries``)."""
        reader = self.reader
        uid = line.get("uuid")
        if isinstance(uid, str) and uid:
            self.uuids.add(uid)
            reader.alias[uid] = stands
        reader.last = stands
        self.count += 1
        message = line.get("message")
        kind = line.get("type")
        if kind == "assistant" and isinstance(message, dict):
            model = message.get("model")
            if isinstance(model, str) and model:
                reader.model = model
                if model != "<synthetic>":
                    self.model_written = (PROVIDER, model)
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                    call = str(block.get("id", ""))
                    reader.tool_names[call] = str(block.get("name", ""))
                    reader.tool_users[call] = stands
        elif kind == "user" and isinstance(message, dict):
            result = line.get("toolUseResult")
            content = message.get("content")
            if isinstance(result, dict) and isinstance(result.get("agentId"), str) and isinstance(content, list):
                calls = [
                    b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                ]
                if len(calls) == 1 and isinstance(calls[0], str):
                    reader.agent_calls[result["agentId"]] = calls[0]


class Transcripts:
    """The mapping state of one session's transcripts, and the batches mapped into entries."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.after: dict[str, str] = {}
        self.main = _Transcript(None, self.after)
        self.subs: dict[str, _Transcript] = {}
        self.state: Any = None  # the client's opaque state (the latest given)
        self.stored_ms = 0  # when a line was kept last (ms)
        self.entry_count = 0  # the session's entries this state has seen

    def of(self, subpath: str | None) -> _Transcript:
        if subpath is None:
            return self.main
        found = self.subs.get(subpath)
        if found is None:
            found = self.subs[subpath] = _Transcript(subpath, self.after)
        return found

    @classmethod
    def of_entries(cls, entries: Iterable[dict[str, Any]]) -> Transcripts:
        """The state as the stored entries give it (file order)."""
        state = cls()
        line_stands: dict[str, str] = {}  # line entry id -> the entry its line stands for
        carried: dict[str, dict[str, Any]] = {}  # assistant messages and compactions, by id
        for entry in entries:
            state.entry_count += 1
            entry_id, parent = entry.get("id"), entry.get("parentId")
            if isinstance(entry_id, str):
                state.ids.add(entry_id)
            kind = entry.get("type")
            if isinstance(entry_id, str) and (
                kind == "compaction" or (kind == "message" and (entry.get("message") or {}).get("role") == "assistant")
            ):
                carried[entry_id] = entry
            if kind != "custom":
                continue
            custom, data = entry.get("customType"), entry.get("data")
            if not isinstance(custom, str) or not custom.startswith("claude-code.") or not isinstance(entry_id, str):
                continue
            subpath = data.get("subpath") if isinstance(data, dict) else None
            if custom == LINE and isinstance(data, dict) and isinstance(data.get("line"), dict):
                transcript = state.of(subpath)
                # What the line stands for: its parent, unless that is the line before it (a later line of
                # an assistant message: the message it went into, as the earlier line stands for it).
                stands = entry_id if not isinstance(parent, str) else line_stands.get(parent, parent)
                line_stands[entry_id] = stands
                line = data["line"]
                opened = transcript.open_message
                message = line.get("message")
                if (
                    opened is not None
                    and line.get("type") == "assistant"
                    and isinstance(message, dict)
                    and message.get("id") == opened[0]
                    and opened[1]["id"] != stands
                ):
                    transcript.superseded(opened[1]["id"], stands)  # the message written again whole
                pending = transcript.pending
                if pending is not None and line.get("isCompactSummary") and pending["id"] != stands:
                    transcript.superseded(pending["id"], stands)
                transcript.saw_line(line, stands)
                transcript.carry(line, carried.get(stands))
                transcript.chain(parent if isinstance(parent, str) else None, entry_id)
                state.stored_ms = max(state.stored_ms, _ms(entry.get("timestamp")))
            elif custom == SUBAGENT and isinstance(subpath, str):
                transcript = state.of(subpath)
                transcript.head = transcript.reader.alias[HEAD] = transcript.reader.last = entry_id
            elif custom == DELETED:
                if isinstance(subpath, str):
                    state.subs.pop(subpath, None)
            elif custom in (MAIN, STATE):
                state.main.chain(parent if isinstance(parent, str) else None, entry_id)
                if custom == STATE and isinstance(data, dict):
                    state.state = data.get("state")
            elif isinstance(data, dict) and not data.get("uuid") and isinstance(parent, str):
                # A record without a uuid the importer kept, chained in below the entry before it.
                state.after[parent] = entry_id
        return state

    def subpaths(self) -> list[str]:
        return sorted(path for path, t in self.subs.items() if t.count)

    def map_batch(
        self, subpath: str | None, lines: list[dict[str, Any]], stored_at: str, state: Any = None
    ) -> tuple[list[dict[str, Any]], int]:
        """The entries a batch adds (in order, each parent before its child) and how many lines were new.

        Lines whose uuid this transcript holds already are skipped (the uuid is the idempotency key)."""
        transcript = self.of(subpath)
        builder = Builder()
        builder.ids = self.ids
        builder.model = transcript.model_written
        reader = transcript.reader
        reader.b, reader.tally = builder, Tally()
        reader.open_assistant = None  # (an earlier batch's message is written: see the module's doc)
        reader.pending_compaction = None
        kept, first, last_line = 0, True, None
        for line in lines:
            uid = line.get("uuid")
            if isinstance(uid, str) and uid:
                if uid in transcript.uuids:
                    continue
                transcript.uuids.add(uid)
            if subpath is not None and transcript.head is None:
                self._place_head(transcript, builder, line, stored_at)
            kept += 1
            transcript.count += 1
            raw = json_bytes(line)
            # (a lone surrogate is read as U+FFFD for the mapping; the verbatim line keeps it)
            try:
                record = decode_lenient(record_decoder, raw)
            except msgspec.ValidationError:
                record = decode_lenient(loose_record_decoder, raw)
            record.line = raw
            if subpath is not None and record.parentUuid is None and record.uuid:
                record = msgspec.structs.replace(record, parentUuid=HEAD, rehomed=True)
            if first:
                first = False
                self._reopen(transcript, builder, line, stored_at)
            reader.read(transcript.count, record)
            parent = transcript.end()
            data: dict[str, Any] = {"line": line} if subpath is None else {"line": line, "subpath": subpath}
            key = (
                f"{reader.prefix}line:{uid}"
                if isinstance(uid, str) and uid
                else f"{reader.prefix}line#{transcript.count}"
            )
            entry = builder.add(key, parent, stored_at, "custom", customType=LINE, data=data)
            transcript.chain(parent, entry)
            last_line = line
        transcript.model_written = builder.model
        if kept and subpath is not None and self.main.reader.last is not None:
            # The leaf back on the main path (a reopened session's leaf is its last entry).
            parent = self.main.end()
            marker = builder.add(f"main@{len(self.ids)}", parent, stored_at, "custom", customType=MAIN, data={})
            self.main.chain(parent, marker)
        if state is not None and subpath is None:
            parent = self.main.end()
            held = builder.add(
                f"state@{len(self.ids)}", parent, stored_at, "custom", customType=STATE, data={"state": state}
            )
            self.main.chain(parent, held)
            self.state = state
        builder.finish()
        if kept:
            self.stored_ms = max(self.stored_ms, _ms(stored_at))
        entries = [_as_dict(e) for e in builder.entries]
        self.entry_count += len(entries)
        if last_line is not None:
            written = {e["id"]: e for e in entries}
            opened, pending = reader.open_assistant, reader.pending_compaction
            transcript.open_message = (opened[0], written[opened[1]]) if opened and opened[1] in written else None
            if pending is not None:
                transcript.pending = written.get(pending)
            elif last_line.get("isCompactSummary") or any(
                e.get("type") == "compaction" and e["id"] in written for e in entries
            ):
                transcript.pending = None
        return entries, kept

    def _reopen(self, transcript: _Transcript, builder: Builder, line: dict[str, Any], stored_at: str) -> None:
        """A batch's first line continuing what an earlier batch left open: the assistant message it adds a
        block to, or the compaction it gives the summary of, written again whole (beside the stored one,
        below the same parent: the path runs through the new one) for the reader to go on filling."""
        reader = transcript.reader
        message = line.get("message")
        opened = transcript.open_message
        if (
            opened is not None
            and line.get("type") == "assistant"
            and isinstance(message, dict)
            and message.get("id") == opened[0]
        ):
            old = opened[1]
            body = old["message"]
            again = builder.assistant(
                f"{reader.prefix}{old['id']}+{line.get('uuid') or transcript.count}",
                old.get("parentId"),
                str(old.get("timestamp") or stored_at),
                int(body.get("timestamp") or 0),
                str(body.get("api") or ""),
                str(body.get("provider") or ""),
                str(body.get("model") or ""),
                msgspec.Raw(json_bytes(body.get("usage") or {})),
                str(body.get("stopReason") or "stop"),
            )
            for block in body.get("content") or ():
                again.add(block)
            reader.open_assistant = (opened[0], again.id)
            transcript.superseded(old["id"], again.id)
            return
        pending = transcript.pending
        if pending is not None and line.get("type") == "user" and line.get("isCompactSummary"):
            fields = {k: v for k, v in pending.items() if k not in ("type", "id", "parentId", "timestamp")}
            again_id = builder.add(
                f"{reader.prefix}{pending['id']}+summary",
                pending.get("parentId"),
                str(pending.get("timestamp") or stored_at),
                "compaction",
                **fields,
            )
            if fields.get("firstKeptEntryId") == pending["id"]:
                builder.dict_entry(again_id)["firstKeptEntryId"] = again_id  # (nothing kept: its own id)
            reader.pending_compaction = again_id
            transcript.superseded(pending["id"], again_id)

    def _place_head(self, transcript: _Transcript, builder: Builder, line: dict[str, Any], stored_at: str) -> None:
        """A subagent transcript's head, under the call that started it when it is known, else the main path's end."""
        main = self.main.reader
        agent = (transcript.subpath or "").rsplit("/", 1)[-1].removeprefix("agent-")
        call = line.get("toolUseId") if line.get("type") == "agent_metadata" else main.agent_calls.get(agent)
        anchor = main.tool_users.get(call) if isinstance(call, str) else None
        if anchor is None:
            anchor = self.main.end()
        head_data: dict[str, Any] = {"agentId": agent, "subpath": transcript.subpath}
        if isinstance(call, str):
            head_data["toolUseId"] = call
        head = builder.add(
            f"{transcript.reader.prefix}head", anchor, stored_at, "custom", customType=SUBAGENT, data=head_data
        )
        transcript.head = transcript.reader.alias[HEAD] = transcript.reader.last = head

    def deleted(self, subpath: str, stored_at: str) -> list[dict[str, Any]]:
        """The entry saying a subpath's lines are gone (none when it holds none), below the main path's end."""
        if subpath not in self.subs:
            return []
        del self.subs[subpath]
        builder = Builder()
        builder.ids = self.ids
        parent = self.main.end()
        marker = builder.add(
            f"deleted:{subpath}@{len(self.ids)}",
            parent,
            stored_at,
            "custom",
            customType=DELETED,
            data={"subpath": subpath},
        )
        self.main.chain(parent, marker)
        self.entry_count += 1
        return [_as_dict(e) for e in builder.entries]


def lines_of(entries: Iterable[dict[str, Any]], subpath: str | None) -> list[dict[str, Any]] | None:
    """The verbatim lines of one transcript of a session's entries (file order); None when it holds none."""
    lines: list[dict[str, Any]] | None = None
    for entry in _own(entries):
        custom, data = entry.get("customType"), entry.get("data")
        if not isinstance(data, dict) or data.get("subpath") != subpath:
            continue
        if custom == LINE:
            if lines is None:
                lines = []
            lines.append(data["line"])
        elif custom == DELETED:
            lines = None
    return lines


def _own(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for entry in entries:
        if entry.get("type") == "custom" and entry.get("customType") in OWN:
            yield entry


def _as_dict(entry: object) -> dict[str, Any]:
    if isinstance(entry, Entry):
        return entry.obj()
    return decode_object(json_bytes(entry))  # (a Raw inside: JSON text the source gave; lone surrogates kept)


def _ms(stamp: object) -> int:
    return ms_of_iso(stamp) if isinstance(stamp, str) else 0


def stamp_now() -> str:
    """Now, as pi writes times: when a batch is kept (its line entries' time: storage time, not the lines')."""
    return iso_of_ms(time.time_ns() // 1_000_000)


__all__ = ["DELETED", "LINE", "MAIN", "STATE", "SUBAGENT", "Transcripts", "lines_of", "stamp_now"]
