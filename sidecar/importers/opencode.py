"""opencode's sessions (``~/.local/share/opencode/opencode.db``, SQLite, as 1.18 writes it).

opencode leaves its database in WAL mode: the last turns (a compaction among them) may
still be only in ``opencode.db-wal``. The user's files are never opened by SQLite here:
the database and its WAL are copied into a private temporary folder and the copy is read
(SQLite replays the WAL into the copy), so nothing of the user's is ever written, locked
or checkpointed.

Tables read: ``session`` (subagents linked by ``parent_id``), ``message`` (JSON ``data``:
role, model, ``summary: true`` on a compaction's summary), ``part`` (text, reasoning,
tool with input and output in one part, step-start/step-finish, patch, file,
compaction, ...). The ``event`` table repeats every update (a tool part three to five
times) and is counted as skipped. What becomes what:

- a user message: its text and file parts as a user message; a ``compaction`` part marks
  the request for a compaction, and the assistant reply with ``summary: true`` that
  follows is that compaction's summary: one compaction entry (opencode's context keeps
  only the summary and what follows, so nothing before it is kept);
- an assistant message: each step (step-start .. step-finish) one assistant message
  (thinking, text, tool calls), then one toolResult per tool part, from its output;
- ``patch``, ``snapshot``, ``agent``, ``retry`` parts and anything unknown: custom entries;
- a subagent session (``parent_id``): a branch under the message whose ``task`` tool started it.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .common import (
    KEPT,
    MAPPED,
    SKIPPED,
    Builder,
    Imported,
    Tally,
    assistant_message,
    id_of,
    image_block,
    iso_of_ms,
    tool_result,
    usage,
    user_message,
)

TOOL = "opencode"
API = "openai-completions"
STEP_PARTS = {"step-start", "step-finish"}
KEPT_PARTS = {"patch", "snapshot", "agent", "retry", "subtask"}


class PrivateCopy:
    """The database with its WAL and shared-memory files, copied to a private folder and opened there."""

    def __init__(self, db: Path) -> None:
        self.db = Path(db)
        self.folder: Path | None = None
        self.connection: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        self.folder = Path(tempfile.mkdtemp(prefix="sidecar-opencode-"))
        target = self.folder / self.db.name
        # The WAL first: a checkpoint between the two copies then leaves its pages in the main file copied after.
        # The shared-memory index is not copied: SQLite rebuilds it from the WAL when the copy is first opened.
        for suffix in ("-wal", ""):
            source = Path(str(self.db) + suffix)
            if source.exists():
                shutil.copyfile(source, Path(str(target) + suffix))
        self.connection = sqlite3.connect(str(target))
        self.connection.row_factory = sqlite3.Row
        return self.connection

    def __exit__(self, *_exc: object) -> None:
        if self.connection is not None:
            self.connection.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


_decoder = msgspec.json.Decoder()


def _json(text: Any, tally: Tally, where: str) -> dict[str, Any] | None:
    try:
        value = _decoder.decode(text)
    except (TypeError, msgspec.DecodeError) as error:
        tally.damage(0, f"{where}: not JSON ({error})")
        return None
    if not isinstance(value, dict):
        tally.damage(0, f"{where}: not a JSON object")
        return None
    return value


# opencode's finish reasons pi names otherwise (keyed by whatever the row holds)
_STOPS: dict[object, str] = {"tool-calls": "toolUse", "length": "length", "error": "error"}


class _Reader:
    def __init__(self, con: sqlite3.Connection, builder: Builder, tally: Tally) -> None:
        self.con, self.b, self.tally = con, builder, tally
        self.task_callers: dict[str, str] = {}  # child session id -> entry id of the assistant message that started it

    def session(self, session_id: str, parent: str | None) -> str | None:
        """The messages of one session below ``parent``; returns the last entry written."""
        leaf = parent
        messages = self.con.execute(
            "select id, time_created, cast(data as blob) as data from message where session_id = ? "
            "order by time_created, id",
            (session_id,),
        ).fetchall()
        parts: dict[str, list[tuple[str, dict[str, object]]]] = {}
        for row in self.con.execute(
            "select id, message_id, cast(data as blob) as data from part where session_id = ? order by message_id, id",
            (session_id,),
        ):
            data = _json(row["data"], self.tally, f"part {row['id']}")
            if data is not None:
                parts.setdefault(row["message_id"], []).append((row["id"], data))
        compaction_pending: str | None = None
        for row in messages:
            data = _json(row["data"], self.tally, f"message {row['id']}")
            if data is None:
                continue
            ms = int((data.get("time") or {}).get("created") or row["time_created"])
            stamp = iso_of_ms(ms)
            mine = parts.get(row["id"], [])
            role = data.get("role")
            if role == "user":
                if any(p.get("type") == "compaction" for _, p in mine):
                    compaction_pending = row["id"]
                    self.tally.count("message:user", MAPPED, None)
                    self.tally.count("part/compaction", MAPPED, "the compaction request")
                    continue
                leaf = self.user(row["id"], leaf, stamp, ms, mine, data)
            elif role == "assistant":
                if data.get("summary") is True:
                    leaf = self.compaction(row["id"], leaf, stamp, mine, data, compaction_pending)
                    compaction_pending = None
                    continue
                leaf = self.assistant(row["id"], leaf, stamp, ms, mine, data)
            else:
                self.tally.unknown(f"message:{role}")
                leaf = self.b.custom(row["id"], leaf, stamp, "opencode.message", {"data": data})
        return leaf

    def user(self, key: str, parent: str | None, stamp: str, ms: int, parts: list, data: dict) -> str | None:
        content: list[dict[str, object]] = []
        for part_id, part in parts:
            kind = part.get("type")
            if kind == "text" and not part.get("synthetic"):
                content.append({"type": "text", "text": str(part.get("text", ""))})
                self.tally.count("part/text", MAPPED)
            elif kind == "text":
                content.append({"type": "text", "text": str(part.get("text", ""))})
                self.tally.count("part/text", MAPPED, "text opencode added to the prompt (synthetic)")
            elif kind == "file":
                url, mime = str(part.get("url", "")), str(part.get("mime", ""))
                if url.startswith("data:") and ";base64," in url and mime.startswith("image/"):
                    content.append(image_block(url.split(";base64,", 1)[1], mime))
                else:
                    content.append({"type": "text", "text": f"[file: {part.get('filename') or url}]"})
                self.tally.count("part/file", MAPPED)
            else:
                parent = self._keep(part_id, parent, stamp, part)
        self.tally.count("message:user", MAPPED)
        model = data.get("model") or {}
        if model.get("modelID"):
            parent = self.b.model_change(
                f"{key}/model", parent, stamp, str(model.get("providerID", "")), str(model["modelID"])
            )
        return self.b.message(key, parent, stamp, user_message(content, ms))

    def _keep(self, part_id: str, parent: str | None, stamp: str, part: dict) -> str | None:
        kind = str(part.get("type"))
        if kind in KEPT_PARTS:
            self.tally.count(f"part/{kind}", KEPT, "kept as a custom entry (not part of the model's context)")
        else:
            self.tally.unknown(f"part/{kind}")
        return self.b.custom(part_id, parent, stamp, f"opencode.{kind}", part)

    def assistant(self, key: str, parent: str | None, stamp: str, ms: int, parts: list, data: dict) -> str | None:
        provider, model = str(data.get("providerID", "")), str(data.get("modelID", ""))
        if model:
            parent = self.b.model_change(f"{key}/model", parent, stamp, provider, model)
        self.tally.count("message:assistant", MAPPED)
        for step, step_parts in enumerate(_steps(parts)):
            blocks: list[dict[str, object]] = []
            tools: list[tuple[str, dict]] = []
            finish: dict[str, Any] = {}
            kept: list[tuple[str, dict]] = []
            for part_id, part in step_parts:
                kind = part.get("type")
                if kind == "text":
                    blocks.append({"type": "text", "text": str(part.get("text", ""))})
                elif kind == "reasoning":
                    blocks.append({"type": "thinking", "thinking": str(part.get("text", ""))})
                elif kind == "tool":
                    state = part.get("state") or {}
                    call = str(part.get("callID") or part_id)
                    blocks.append(
                        {
                            "type": "toolCall",
                            "id": call,
                            "name": str(part.get("tool", "")),
                            "arguments": state.get("input") if isinstance(state.get("input"), dict) else {},
                        }
                    )
                    tools.append((part_id, part))
                elif kind in STEP_PARTS:
                    if kind == "step-finish":
                        finish = part
                    self.tally.count(f"part/{kind}", MAPPED, "a step's bounds and usage")
                    continue
                else:
                    kept.append((part_id, part))
                    continue
                self.tally.count(f"part/{kind}", MAPPED)
            tokens = finish.get("tokens") or data.get("tokens") or {}
            cache = tokens.get("cache") or {}
            stop = _STOPS.get(finish.get("reason"), None)
            if blocks or not kept:
                parent = self.b.message(
                    f"{key}/{step}",
                    parent,
                    stamp,
                    assistant_message(
                        blocks,
                        ms,
                        API,
                        provider,
                        model,
                        usage(
                            int(tokens.get("input") or 0),
                            int(tokens.get("output") or 0),
                            int(cache.get("read") or 0),
                            int(cache.get("write") or 0),
                        ),
                        stop if stop != "toolUse" or tools else None,
                    ),
                )
                caller = parent
                for part_id, part in tools:
                    state = part.get("state") or {}
                    failed = state.get("status") == "error"
                    output = state.get("error") if failed else state.get("output")
                    if state.get("status") not in ("completed", "error"):
                        output = f"[tool {state.get('status') or 'pending'}: no output recorded]"
                    metadata = state.get("metadata") or {}
                    parent = self.b.message(
                        part_id,
                        parent,
                        stamp,
                        tool_result(
                            str(part.get("callID") or part_id),
                            str(part.get("tool", "")),
                            str(output or ""),
                            ms,
                            failed,
                            {"title": state.get("title"), "metadata": metadata}
                            if metadata or state.get("title")
                            else None,
                        ),
                    )
                    child = metadata.get("sessionId") or metadata.get("sessionID")
                    if part.get("tool") == "task" and child:
                        self.task_callers[str(child)] = caller
            for part_id, part in kept:
                parent = self._keep(part_id, parent, stamp, part)
        return parent

    def compaction(
        self, key: str, parent: str | None, stamp: str, parts: list, data: dict, request: str | None
    ) -> str | None:
        summary = "\n".join(str(p.get("text", "")) for _, p in parts if p.get("type") == "text")
        for _, part in parts:
            self.tally.count(f"part/{part.get('type')}", MAPPED, "the compaction's summary")
        self.tally.count("message:assistant", MAPPED, None)
        entry = self.b.add(
            key,
            parent,
            stamp,
            "compaction",
            summary=summary,
            firstKeptEntryId="",
            tokensBefore=0,
            details={"opencode": {"request": request, "summary": key, "model": data.get("modelID")}},
        )
        self.b.dict_entry(entry)["firstKeptEntryId"] = entry  # opencode keeps nothing from before a compaction
        return entry


def _steps(parts: list[tuple[str, dict]]) -> Iterator[list[tuple[str, dict]]]:
    """Parts split at each step-start (a message holds one or more model steps)."""
    step: list[tuple[str, dict]] = []
    for item in parts:
        if item[1].get("type") == "step-start" and any(p.get("type") != "step-start" for _, p in step):
            yield step
            step = []
        step.append(item)
    if step:
        yield step


def sessions_in(db: Path) -> list[str]:
    with PrivateCopy(db) as con:
        return [
            row[0] for row in con.execute("select id from session where parent_id is null order by time_created, id")
        ]


def import_database(db: Path, only: str | None = None) -> list[Imported]:
    """Every top-level session in the database (or only ``only``), subagents as branches."""
    db = Path(db)
    out = []
    with PrivateCopy(db) as con:
        roots = con.execute("select * from session where parent_id is null order by time_created, id").fetchall()
        events = (
            dict(con.execute("select type, count(*) from event group by type").fetchall()) if _has(con, "event") else {}
        )
        for root in roots:
            if only is not None and root["id"] != only:
                continue
            tally, builder = Tally(), Builder()
            for kind, count in events.items():
                tally.counts.setdefault(f"event/{kind}", {})[SKIPPED] = count
                tally.reasons[f"event/{kind}/{SKIPPED}"] = "opencode's event log repeats every update of the rows read"
            reader = _Reader(con, builder, tally)
            reader.session(root["id"], None)
            tally.count("session", MAPPED)
            subagents = []
            for child in _children(con, root["id"]):
                anchor = reader.task_callers.get(child["id"]) or (
                    id_of(builder.entries[0]) if builder.entries else None
                )
                sub = Builder()
                sub.ids = builder.ids
                sub_reader = _Reader(con, sub, tally)
                head = sub.custom(
                    f"{child['id']}:head",
                    anchor,
                    iso_of_ms(child["time_created"]),
                    "opencode.subagent",
                    {"sessionId": child["id"], "title": child["title"], "agent": child["agent"]},
                )
                sub_reader.session(child["id"], head)
                reader.task_callers.update(sub_reader.task_callers)
                builder.insert_after(anchor, sub.entries)
                tally.count("session (subagent)", MAPPED)
                subagents.append(child["id"])
            imported = Imported(
                TOOL,
                root["id"],
                str(db),
                str(root["directory"] or ""),
                iso_of_ms(root["time_created"]),
                builder.entries,
                tally,
                name=root["title"] or None,
            )
            if subagents:
                imported.extra["subagents"] = subagents
            out.append(imported)
    return out


def _has(con: sqlite3.Connection, table: str) -> bool:
    return con.execute("select 1 from sqlite_master where type = 'table' and name = ?", (table,)).fetchone() is not None


def _children(con: sqlite3.Connection, parent: str) -> list[sqlite3.Row]:
    """Subagent sessions below ``parent``, depth first (a subagent's own subagents too)."""
    rows = con.execute("select * from session where parent_id = ? order by time_created, id", (parent,)).fetchall()
    out: list[sqlite3.Row] = []
    for row in rows:
        out.append(row)
        out.extend(_children(con, row["id"]))
    return out
