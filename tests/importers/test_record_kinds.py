"""Generated sources holding record kinds the harness run does not produce, damaged lines, unknown kinds, errors.

The kinds come from the tools' own definitions: Claude Code's transcript lines (older
``summary`` lines, inline ``isSidechain`` subagents of the ``Task`` tool, images,
``redacted_thinking``, failed tool results, ``file-history-snapshot``), Codex's
``ResponseItem`` / ``EventMsg`` (the older ``user_message``/``agent_message``/
``agent_reasoning``/``context_compacted`` events, ``local_shell_call``, freeform
``custom_tool_call`` ``apply_patch``, ``input_image``, ``ghost_snapshot``, a ``compacted``
line without ``replacement_history``), and opencode's part kinds (``file`` images,
a tool in the ``error`` state, ``patch``). Every file goes through a real sidecar.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .importing import call, request

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"


def write_lines(path: Path, lines: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def claude_file(folder: Path) -> Path:
    def rec(kind: str, uid: str | None, parent: str | None, **fields) -> dict:
        out = {
            "type": kind,
            "uuid": uid,
            "parentUuid": parent,
            "sessionId": "gen-claude",
            "cwd": "/work/gen",
            "timestamp": "2026-01-02T03:04:05.000Z",
            "isSidechain": False,
            **fields,
        }
        return {k: v for k, v in out.items() if v is not None or k == "parentUuid"}

    def assistant(uid: str, parent: str, msg_id: str, block: dict, **fields) -> dict:
        return rec(
            "assistant",
            uid,
            parent,
            message={
                "id": msg_id,
                "role": "assistant",
                "model": "claude-gen-1",
                "content": [block],
                "usage": {"input_tokens": 3},
            },
            **fields,
        )

    return write_lines(
        folder / "gen-claude.jsonl",
        [
            {"type": "summary", "summary": "An older title line", "leafUuid": "a3"},
            rec(
                "user",
                "u1",
                None,
                message={
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look at this"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                    ],
                },
            ),
            assistant("a1", "u1", "m1", {"type": "redacted_thinking", "data": "opaque"}),
            assistant(
                "a2",
                "a1",
                "m1",
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Task",
                    "input": {"description": "sub", "prompt": "sub prompt"},
                },
            ),
            {**rec("user", "s1", None, message={"role": "user", "content": "sub prompt"}), "isSidechain": True},
            {**assistant("s2", "s1", "m2", {"type": "text", "text": "sub reply"}), "isSidechain": True},
            rec(
                "user",
                "u2",
                "a2",
                message={
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "is_error": True,
                            "content": [{"type": "text", "text": "failed"}],
                        }
                    ],
                },
            ),
            '{"type": "user", "uuid": "broken"',
            rec("future-kind", "f1", "u2", payload={"anything": 1}),
            assistant("a3", "f1", "m3", {"type": "text", "text": "done"}),
            {"type": "file-history-snapshot", "messageId": "a3", "snapshot": {}},
            rec("system", "y1", "a3", subtype="informational", content="note"),
        ],
    )


def codex_file(folder: Path) -> Path:
    def line(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload}

    return write_lines(
        folder / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-gen.jsonl",
        [
            line(
                "session_meta",
                {
                    "id": "gen-codex",
                    "cwd": "/work/gen",
                    "timestamp": "2026-01-02T03:04:05.000Z",
                    "model_provider": "openai",
                    "cli_version": "0.40.0",
                },
                5,
            ),
            line("turn_context", {"cwd": "/work/gen", "model": "gpt-gen"}, 6),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "hi"},
                        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                    ],
                },
                7,
            ),
            line("event_msg", {"type": "user_message", "message": "hi"}, 7),
            line(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "plan it"}],
                    "encrypted_content": "enc",
                },
                8,
            ),
            line(
                "response_item", {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": PATCH}, 8
            ),
            line(
                "response_item",
                {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success. Updated a.txt"},
                9,
            ),
            line("event_msg", {"type": "agent_reasoning", "text": "plan it"}, 9),
            line(
                "response_item",
                {
                    "type": "local_shell_call",
                    "call_id": "c2",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["ls"]},
                },
                10,
            ),
            line(
                "response_item",
                {"type": "function_call_output", "call_id": "c2", "output": {"content": "a.txt", "success": True}},
                11,
            ),
            line(
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "all done"}]},
                12,
            ),
            line("event_msg", {"type": "agent_message", "message": "all done"}, 12),
            line("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}, 13),
            "not json at all",
            line("compacted", {"message": "older summary"}, 14),
            line("event_msg", {"type": "context_compacted"}, 14),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "after"}]},
                15,
            ),
            line("future_kind", {"x": 1}, 16),
        ],
    )


def opencode_db(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript("""
        create table session (id text primary key, parent_id text, directory text, title text, agent text,
                              time_created integer);
        create table message (id text primary key, session_id text, time_created integer, data text);
        create table part (id text primary key, message_id text, session_id text, time_created integer, data text);
    """)
    con.execute("insert into session values ('ses_gen', null, '/work/gen', 'Generated', 'build', 1767323045000)")
    rows = [
        (
            "msg_1",
            1767323045000,
            {"role": "user", "time": {"created": 1767323045000}, "model": {"providerID": "p", "modelID": "m"}},
        ),
        (
            "msg_2",
            1767323046000,
            {"role": "assistant", "providerID": "p", "modelID": "m", "time": {"created": 1767323046000}},
        ),
    ]
    for mid, at, data in rows:
        con.execute("insert into message values (?, 'ses_gen', ?, ?)", (mid, at, json.dumps(data)))
    parts = [
        ("prt_1", "msg_1", {"type": "text", "text": "see image"}),
        (
            "prt_2",
            "msg_1",
            {"type": "file", "mime": "image/png", "filename": "a.png", "url": f"data:image/png;base64,{PNG}"},
        ),
        ("prt_3", "msg_2", {"type": "step-start"}),
        (
            "prt_4",
            "msg_2",
            {
                "type": "tool",
                "tool": "bash",
                "callID": "call_x",
                "state": {"status": "error", "input": {"command": "false"}, "error": "exit 1"},
            },
        ),
        ("prt_5", "msg_2", {"type": "patch", "hash": "abc", "files": ["a.txt"]}),
        ("prt_6", "msg_2", {"type": "future-part", "x": 1}),
        ("prt_7", "msg_2", {"type": "step-finish", "reason": "tool-calls", "tokens": {"input": 5, "output": 2}}),
    ]
    for pid, mid, data in parts:
        con.execute("insert into part values (?, ?, 'ses_gen', 0, ?)", (pid, mid, json.dumps(data)))
    con.execute("insert into part values ('prt_8', 'msg_2', 'ses_gen', 0, '{broken')")
    con.commit()
    con.close()
    return db


def imported(root: Path, tool: str, source: Path) -> dict:
    async def job(client):
        result = await client.request("session/import", {"tool": tool, "paths": [str(source)]})
        (session,) = result["sessions"]
        await client.request("session/open", {"sessionId": session["sessionId"]})
        entries = (await client.request("session/getEntries", {"sessionId": session["sessionId"]}))["entries"]
        context = await client.request("session/buildContext", {"sessionId": session["sessionId"]})
        return {"session": session, "entries": entries, "context": context}

    return call(root, job)


def by_kind(session: dict) -> dict:
    return {c["kind"]: {"mapped": 0, "kept": 0, "skipped": 0, **c} for c in session["counts"]}


def test_claude_code_kinds_damaged_line_and_unknown_kind(tmp_path):
    got = imported(tmp_path / "root", "claude-code", claude_file(tmp_path / "src"))
    session, entries = got["session"], got["entries"]
    assert [d["line"] for d in session["damaged"]] == [8]
    assert session["unrecognised"] == ["future-kind"]
    assert by_kind(session)["future-kind"]["kept"] == 1
    user = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
    assert user["content"][1] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    (first,) = [
        e["message"]
        for e in entries
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"]["content"][0]["type"] == "thinking"
    ]
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]  # two lines of one API message
    assert first["content"][0]["redacted"] is True and first["content"][1]["name"] == "Task"
    failed = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult")
    assert failed["isError"] is True and failed["toolName"] == "Task" and failed["content"][0]["text"] == "failed"
    context = [m for m in got["context"]["messages"]]
    assert [m["role"] for m in context] == ["user", "assistant", "toolResult", "assistant"]
    on_path = set(got["context"]["entryIds"])
    sub = next(e for e in entries if e["type"] == "message" and e["message"]["content"] == "sub prompt")
    assert sub["id"] not in on_path
    kinds = {e.get("customType") for e in entries if e["type"] == "custom"}
    assert {
        "claude-code.summary",
        "claude-code.file-history-snapshot",
        "claude-code.system",
        "claude-code.future-kind",
        "claude-code.subagent",
    } <= kinds


def test_codex_older_and_newer_kinds(tmp_path):
    got = imported(tmp_path / "root", "codex", codex_file(tmp_path / "src"))
    session, entries = got["session"], got["entries"]
    assert [d["line"] for d in session["damaged"]] == [14]
    assert session["unrecognised"] == ["future_kind", "response_item/ghost_snapshot"]
    counts = by_kind(session)
    for event in ("user_message", "agent_reasoning", "agent_message", "context_compacted"):
        assert counts[f"event_msg/{event}"]["skipped"] == 1 and counts[f"event_msg/{event}"]["mapped"] == 0
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert messages[0]["content"][1] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assistant = messages[1]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "toolCall"]  # one response, up to its output
    assert assistant["content"][0]["thinkingSignature"] == "enc"
    patch = assistant["content"][1]
    assert patch["name"] == "apply_patch" and patch["arguments"] == {"input": PATCH}
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [(r["toolName"], r["content"][0]["text"]) for r in results] == [
        ("apply_patch", "Success. Updated a.txt"),
        ("local_shell_call", "a.txt"),
    ]
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["summary"] == "older summary"
    assert [m["role"] for m in got["context"]["messages"]] == ["compactionSummary", "user"]


@pytest.mark.parametrize("odd", [7, True, "text", {"type": "output_text", "text": "x"}], ids=repr)
def test_codex_fields_that_should_hold_lists_but_do_not_are_read_as_empty(tmp_path, odd):
    """A message's content, a reasoning's summary and content, a spawn's receiver ids that are not lists (a damaged or
    foreign writer's line) import as holding no parts; the lines around them import as usual (a number or true
    made the importer fail the whole import with a TypeError)."""

    def line(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload}

    text = lambda value: [{"type": "output_text", "text": value}]  # noqa: E731
    source = write_lines(
        tmp_path / "src" / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-odd.jsonl",
        [
            line("session_meta", {"id": "odd-codex", "cwd": "/work/odd", "timestamp": "2026-01-02T03:04:05.000Z"}, 5),
            line("response_item", {"type": "message", "role": "user", "content": odd}, 6),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                7,
            ),
            line("response_item", {"type": "reasoning", "summary": odd, "content": odd}, 8),
            line("response_item", {"type": "message", "role": "assistant", "content": odd}, 9),
            line("response_item", {"type": "message", "role": "assistant", "content": text("hello")}, 10),
            line(
                "event_msg",
                {
                    "type": "item_completed",
                    "item": {
                        "type": "CollabAgentToolCall",
                        "tool": "spawn_agent",
                        "id": "c1",
                        "receiver_thread_ids": odd,
                    },
                },
                11,
            ),
        ],
    )
    got = imported(tmp_path / "root", "codex", source)
    messages = [e["message"] for e in got["entries"] if e["type"] == "message"]
    texts = [b.get("text") for m in messages for b in m["content"] if b.get("type") == "text"]
    assert "hi" in texts and "hello" in texts, messages
    assert not got["session"].get("damaged")


@pytest.mark.parametrize("odd", [7, True, "text", [{"a": 1}]], ids=repr)
def test_compaction_lines_of_odd_shapes_still_give_their_compaction(tmp_path, odd):
    """A Claude Code compact_boundary whose metadata, preserved messages, their uuids or preTokens, and a Codex
    compacted line whose replacement_history, are not of the shapes those tools write: the compaction is imported
    (a number failed the import with a TypeError, a string preTokens with a ValueError, a dict uuid unhashable)."""
    claude = write_lines(
        tmp_path / "claude" / "-work-odd" / "odd-claude.jsonl",
        [
            {
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "sessionId": "odd-claude",
                "cwd": "/work/odd",
                "timestamp": "2026-01-02T03:04:05.000Z",
                "message": {"role": "user", "content": "hi"},
            },
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c1",
                "parentUuid": None,
                "logicalParentUuid": "u1",
                "sessionId": "odd-claude",
                "cwd": "/work/odd",
                "timestamp": "2026-01-02T03:04:06.000Z",
                "content": "Conversation compacted",
                "compactMetadata": {"trigger": "manual", "preTokens": odd, "preservedMessages": {"uuids": odd}},
            },
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c2",
                "parentUuid": "c1",
                "sessionId": "odd-claude",
                "cwd": "/work/odd",
                "timestamp": "2026-01-02T03:04:07.000Z",
                "content": "again",
                "compactMetadata": {"preservedMessages": odd},
            },
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c3",
                "parentUuid": "c2",
                "sessionId": "odd-claude",
                "cwd": "/work/odd",
                "timestamp": "2026-01-02T03:04:08.000Z",
                "content": "and again",
                "compactMetadata": odd,
            },
        ],
    )
    got = imported(tmp_path / "root-claude", "claude-code", claude)
    assert [e["summary"] for e in got["entries"] if e["type"] == "compaction"] == [
        "Conversation compacted",
        "again",
        "and again",
    ]

    def line(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload}

    codex = write_lines(
        tmp_path / "codex" / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-odd.jsonl",
        [
            line("session_meta", {"id": "odd-codex", "cwd": "/work/odd", "timestamp": "2026-01-02T03:04:05.000Z"}, 5),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                6,
            ),
            line("compacted", {"message": "older summary", "replacement_history": odd}, 7),
        ],
    )
    got = imported(tmp_path / "root-codex", "codex", codex)
    assert [e["summary"] for e in got["entries"] if e["type"] == "compaction"] == ["older summary"]


def test_opencode_part_kinds_and_a_damaged_row(tmp_path):
    got = imported(tmp_path / "root", "opencode", opencode_db(tmp_path / "src"))
    session, entries = got["session"], got["entries"]
    assert session["unrecognised"] == ["part/future-part"]
    assert any("prt_8" in d["error"] for d in session["damaged"])
    user = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
    assert user["content"] == [
        {"type": "text", "text": "see image"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
    result = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult")
    assert result["isError"] is True and result["content"][0]["text"] == "exit 1" and result["toolName"] == "bash"
    assert by_kind(session)["part/patch"]["kept"] == 1
    assert any(e.get("customType") == "opencode.patch" for e in entries)


def test_errors_name_what_to_fix(tmp_path):
    from session_sidecar_client import RpcError

    async def job(client):
        answers = []
        not_sqlite = tmp_path / "opencode.db"
        not_sqlite.write_text("hello")
        empty = tmp_path / "empty"
        empty.mkdir()
        for params in (
            {"tool": "codex", "paths": [str(tmp_path / "missing")]},
            {"tool": "opencode", "paths": [str(not_sqlite)]},
            {"tool": "claude-code", "paths": [str(empty)]},
            {"tool": "cursor", "paths": [str(empty)]},
        ):
            try:
                await client.request("session/import", params)
                answers.append(None)
            except RpcError as error:
                answers.append((error.code, error.message))
        return answers

    missing, unreadable, nothing, tool = call(tmp_path / "root", job)
    assert missing[0] == -33060 and "no such file" in missing[1]
    assert unreadable[0] == -33061 and "not an SQLite database" in unreadable[1]
    assert nothing[0] == -33060 and "holds no claude-code sessions" in nothing[1]
    assert tool[0] == -32602 and "codex, claude-code, opencode" in tool[1]


def test_the_command_line_imports_and_reports(tmp_path):
    source = claude_file(tmp_path / "src")
    # A dry run first, into a store that holds nothing yet (on the PostgreSQL pass every sidecar of a
    # test shares one database, so a dry run after the import would find the session there).
    dry = request(tmp_path / "other", "session/import", {"tool": "claude-code", "paths": [str(source)], "dryRun": True})
    assert dry["sessions"][0]["created"] is False and dry["sessions"][0]["path"] == ""
    assert not list((tmp_path / "other").rglob("*.jsonl"))
    argv = [
        sys.executable,
        "-m",
        "sidecar",
        "import",
        "--root",
        str(tmp_path / "root"),
        "--from",
        "claude-code",
        str(source),
    ]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported: claude-code gen-claude -> ")
    assert (
        "damaged line 8 skipped" in first.stdout
        and "not recognised (kept as custom entries): future-kind" in first.stdout
    )
    again = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120)
    (session,) = json.loads(again.stdout)["sessions"]
    assert session["created"] is False and Path(session["path"]).is_file()


@pytest.mark.parametrize("tool", ["codex", "claude-code"])
def test_a_folder_imports_every_session_in_it(tmp_path, tool):
    source = codex_file(tmp_path / "src") if tool == "codex" else claude_file(tmp_path / "src")
    folder = tmp_path / "src" if tool == "codex" else source.parent
    result = request(tmp_path / "root", "session/import", {"tool": tool, "paths": [str(folder)]})
    assert [s["source"] for s in result["sessions"]] == [str(source)]
