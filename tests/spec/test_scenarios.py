"""Section 7.7 of the session spec, S7.1-S7.18, through the protocol on a real sidecar (--format spec)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rpc.harness import assistant, tool_call, user

from sidecar.store.spec import prompts

from .helpers import ULID, SpecServer, llm_texts


def tool_result(call_id: str, text: str, name: str = "bash") -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    }


def at(entry: dict[str, Any], timestamp: str) -> dict[str, Any]:
    return {**entry, "timestamp": timestamp}


async def new_session(spec: SpecServer, **params: Any) -> str:
    return (await spec.call("session/create", {"cwd": "/w", **params}))["sessionId"]


async def pods_conversation(spec: SpecServer, sid: str) -> None:
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                user("What pods are running?"),
                assistant("Let me check.", tool_call("tc_1", "bash", command="kubectl get pods")),
                tool_result("tc_1", "NAME   READY   STATUS\nnginx  1/1     Running"),
                assistant("There is one pod running: nginx, with status Running."),
            ],
        },
    )


async def test_s7_1_create_makes_the_folder_with_an_empty_log_and_metadata(spec: SpecServer):
    created = await spec.call("session/create", {"cwd": "/w"})
    sid = created["sessionId"]
    assert re.match(ULID, sid)
    folder = spec.folder(sid)
    assert created["path"] == str(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["metadata.json", "session.jsonl"]
    assert (folder / "session.jsonl").stat().st_size == 0
    metadata = spec.metadata(sid)
    assert metadata["id"] == sid and metadata["messageCount"] == 0 and metadata["source"] == "interactive"
    assert metadata["lastMessageAt"] == metadata["createdAt"]
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


async def test_s7_2_appends_only_add_lines(spec: SpecServer):
    sid = await new_session(spec)
    path = spec.folder(sid) / "session.jsonl"
    inode, before = path.stat().st_ino, b""
    for index in range(5):
        await spec.call("session/append", {"sessionId": sid, "entries": [user(f"q{index}"), assistant(f"a{index}")]})
        now = path.read_bytes()
        assert now.startswith(before) and len(now) > len(before)
        assert path.stat().st_ino == inode  # the same file, never replaced
        before = now
    assert [r["seq"] for r in spec.records(sid)] == list(range(1, 11))
    assert spec.lines(sid)[0] == (
        b'{"recordType":"message","schemaVersion":1,"seq":1,"role":"user","content":[{"type":"text","text":"q0"}],'
        b'"timestamp":"' + spec.records(sid)[0]["timestamp"].encode() + b'"}'
    )


async def test_s7_3_a_reload_rebuilds_history_with_the_compaction_overlay(sessions_root: Path):
    spec = await SpecServer.start(sessions_root)
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10})
    await spec.call("session/append", {"sessionId": sid, "entries": [user("And services?"), assistant("None.")]})
    before = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
    entries_before = await spec.call("session/getEntries", {"sessionId": sid})
    await spec.stop()
    spec = await SpecServer.start(sessions_root, via_settings=True)  # a new process; the setting via initialize
    try:
        opened = await spec.call("session/open", {"sessionId": sid})
        assert opened["entryCount"] == 7 and opened["parseErrors"] == 0
        after = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
        assert llm_texts(after["messages"]) == llm_texts(before["messages"])
        assert (await spec.call("session/getEntries", {"sessionId": sid}))["entries"] == entries_before["entries"]
    finally:
        await spec.stop()


async def test_s7_4_metadata_follows_every_append(spec: SpecServer):
    sid = await new_session(spec)
    for count, stamp in ((2, "2025-02-11T10:00:01.000Z"), (4, "2025-02-11T10:05:00.000Z")):
        await spec.call(
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    at(user("q"), stamp),
                    at(
                        {
                            "type": "message",
                            "message": {
                                "role": "assistant",
                                "content": [{"type": "text", "text": "a"}],
                                "model": "model-x",
                                "usage": {"input": 7, "output": 3},
                            },
                        },
                        stamp,
                    ),
                ],
            },
        )
        metadata = spec.metadata(sid)
        assert metadata["messageCount"] == count and metadata["lastMessageAt"] == stamp
    assert metadata["model"] == "model-x"
    assert metadata["metrics"]["inputTokens"] == 14 and metadata["metrics"]["totalTokens"] == 20
    assert not list(spec.folder(sid).glob(".*tmp*"))  # written by temp file and rename: nothing left over


async def test_a_record_keeps_the_messages_own_time_and_metadata_follows_it(spec: SpecServer):
    """pi's format keeps message.timestamp; the spec format wrote the append's time instead, and
    lastMessageAt and the listing's modified followed the append, not the conversation."""
    sid = await new_session(spec)
    said, answered = 1_700_000_000_000, 1_700_000_060_123
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                {"type": "message", "message": {**user("old question")["message"], "timestamp": said}},
                at(
                    {"type": "message", "message": {**assistant("old answer")["message"], "timestamp": answered}},
                    "2025-05-05T05:05:05.005Z",
                ),
                user("no time of its own"),
            ],
        },
    )
    records = spec.records(sid)
    assert [r["timestamp"] for r in records[:2]] == ["2023-11-14T22:13:20.000Z", "2023-11-14T22:14:20.123Z"]
    appended_at = records[2]["timestamp"]
    assert appended_at > "2026"  # the append's own time
    assert spec.metadata(sid)["lastMessageAt"] == appended_at
    context = await spec.call("session/buildContext", {"sessionId": sid})
    assert [m["timestamp"] for m in context["messages"][:2]] == [said, answered]
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [{"type": "message", "message": {**user("late")["message"], "timestamp": said + 5}}],
        },
    )
    assert spec.metadata(sid)["lastMessageAt"] == "2023-11-14T22:13:20.005Z"
    listed = (await spec.call("session/list", {}))["sessions"]
    assert [s["modified"] for s in listed if s["sessionId"] == sid] == ["2023-11-14T22:13:20.005Z"]


async def test_s7_5_list_is_newest_message_first(spec: SpecServer):
    ids = [await new_session(spec) for _ in range(3)]
    for sid, stamp in zip(ids, ("2025-03-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z", "2025-02-01T00:00:00.000Z")):
        await spec.call("session/append", {"sessionId": sid, "entries": [at(user(f"hello {stamp}"), stamp)]})
    listed = (await spec.call("session/list", {}))["sessions"]
    assert [s["sessionId"] for s in listed] == [ids[0], ids[2], ids[1]]
    assert [s["modified"] for s in listed] == sorted((s["modified"] for s in listed), reverse=True)
    assert listed[0]["firstMessage"] == "hello 2025-03-01T00:00:00.000Z" and listed[0]["messageCount"] == 1
    paged = await spec.call("session/list", {"limit": 2})
    rest = await spec.call("session/list", {"limit": 2, "cursor": paged["nextCursor"]})
    assert [s["sessionId"] for s in paged["sessions"] + rest["sessions"]] == [ids[0], ids[2], ids[1]]


async def test_s7_6_compaction_appends_a_record(spec: SpecServer):
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    before = (spec.folder(sid) / "session.jsonl").read_bytes()
    result = await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10})
    after = (spec.folder(sid) / "session.jsonl").read_bytes()
    assert after.startswith(before)
    last = spec.records(sid)[-1]
    assert last["recordType"] == "compaction" and last["seq"] == 5 and last["summary"] == result["summary"]
    assert last["firstKeptSeq"] == 4 and last["tokensBefore"] == result["tokensBefore"] > 0
    assert spec.metadata(sid)["messageCount"] == 4  # a compaction is not a message


async def test_s7_7_cron_sessions_carry_source_and_job(spec: SpecServer):
    sid = await new_session(spec, source="cron", cronJobId="nightly-report")
    metadata = spec.metadata(sid)
    assert metadata["source"] == "cron" and metadata["cronJobId"] == "nightly-report"
    implied = await new_session(spec, cronJobId="hourly")
    assert spec.metadata(implied)["source"] == "cron"
    plain = await new_session(spec)
    assert spec.metadata(plain)["source"] == "interactive" and "cronJobId" not in spec.metadata(plain)
    error = await spec.error("session/create", {"cwd": "/w", "source": "interactive", "cronJobId": "x"})
    assert error["code"] == -32602 and "cronJobId" in error["message"]


async def test_s7_8_ids_that_are_not_ulids_are_refused_before_any_path(spec: SpecServer):
    outside = spec.root.parent / "escaped"
    for bad in (
        "../escaped",
        "01arz3ndektsv4rrffq69g5fav",
        "01ARZ3NDEKTSV4RRFFQ69G5FAI",
        "01ARZ3NDEKTSV4RRFFQ69G5FA",
        "/tmp/x",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV/../../x",
    ):
        for method, params in (
            ("session/open", {"sessionId": bad}),
            ("session/create", {"cwd": "/w", "sessionId": bad}),
            ("session/append", {"sessionId": bad, "entries": [user("x")]}),
            ("session/delete", {"sessionId": bad}),
            ("session/fork", {"sessionId": bad}),
        ):
            error = await spec.error(method, params)
            assert error["code"] == -33002, (method, bad, error)
            # (delete checks pi's id syntax first; every id that passes it is then held to the ULID pattern)
            assert "ULID" in error["message"] or "1-64 characters" in error["message"], (method, bad, error)
    assert "ULID" in (await spec.error("session/open", {"sessionId": "01arz3ndektsv4rrffq69g5fav"}))["message"]
    assert not outside.exists() and not any(spec.root.iterdir())


async def test_s7_9_a_torn_last_line_is_ignored_and_set_aside(sessions_root: Path):
    spec = await SpecServer.start(sessions_root)
    sid = await new_session(spec)
    await spec.call("session/append", {"sessionId": sid, "entries": [user("q1"), assistant("a1")]})
    await spec.stop()
    log = sessions_root / sid / "session.jsonl"
    whole = log.read_bytes()
    torn = b'{"recordType":"message","schemaVersion":1,"seq":3,"role":"us'  # a crash in the middle of a write
    log.write_bytes(whole + torn)
    spec = await SpecServer.start(sessions_root)
    try:
        opened = await spec.call("session/open", {"sessionId": sid})
        assert opened["entryCount"] == 2 and opened["leafId"] == "00000002"
        await spec.call("session/append", {"sessionId": sid, "entries": [user("q2")]})
        records = spec.records(sid)  # every line parses: the new record starts on its own line
        assert [r["seq"] for r in records] == [1, 2, 3] and records[2]["content"][0]["text"] == "q2"
        assert log.read_bytes().startswith(whole)
        assert (sessions_root / sid / "session.jsonl.torn").read_bytes().startswith(torn)
    finally:
        await spec.stop()


async def test_s7_10_concurrent_appends_to_one_session_are_queued_not_interleaved(spec: SpecServer):
    sid = await new_session(spec)
    server = spec.server
    ids = []
    for index in range(20):  # all sent before any answer is read
        server._next_id += 1
        ids.append(server._next_id)
        server.send(
            {
                "jsonrpc": "2.0",
                "id": server._next_id,
                "method": "session/append",
                "params": {"sessionId": sid, "entries": [user(f"turn {index}"), assistant(f"reply {index}")]},
            }
        )
    answers = {}
    while len(answers) < 20:
        message = await server.receive()
        if "id" in message and "method" not in message:
            answers[message["id"]] = message
    assert all("result" in answers[i] for i in ids)
    records = spec.records(sid)
    assert [r["seq"] for r in records] == list(range(1, 41))
    for index in range(20):  # each batch whole and in the order sent
        assert records[2 * index]["content"][0]["text"] == f"turn {index}"
        assert records[2 * index + 1]["content"][0]["text"] == f"reply {index}"


async def test_s7_11_context_after_compaction_is_summary_then_kept_then_newer(spec: SpecServer):
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    await spec.call("session/append", {"sessionId": sid, "entries": [user("Restart nginx"), assistant("Restarted.")]})
    result = await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 12})
    await spec.call("session/append", {"sessionId": sid, "entries": [user("Thanks"), assistant("You're welcome.")]})
    compaction = spec.records(sid)[-3]
    assert compaction["recordType"] == "compaction"
    kept = [r for r in spec.records(sid) if r["recordType"] == "message" and r["seq"] >= compaction["firstKeptSeq"]]
    context = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
    first = context["messages"][0]
    assert first["role"] == "user" and first["content"][0]["text"].startswith(
        "The conversation history before this point was compacted into the following summary:"
    )
    assert f"<summary>\n{result['summary']}\n</summary>" in first["content"][0]["text"]
    expected = [f"{r['role']}: {r['content'][0]['text']}" for r in kept]
    assert llm_texts(context["messages"][1:]) == expected
    assert expected[-2:] == ["user: Thanks", "assistant: You're welcome."]
    assert "user: What pods are running?" not in llm_texts(context["messages"])


async def test_s7_12_content_is_always_a_list_of_blocks(spec: SpecServer):
    sid = await new_session(spec)
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                {"type": "message", "message": {"role": "user", "content": "a bare string"}},
                {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
            ],
        },
    )
    await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 1})
    for record in spec.records(sid):
        if record["recordType"] == "message":
            assert isinstance(record["content"], list) and all(isinstance(b, dict) for b in record["content"])
    assert spec.records(sid)[0]["content"] == [{"type": "text", "text": "a bare string"}]


async def test_s7_13_compaction_never_cuts_between_a_call_and_its_result(spec: SpecServer):
    for keep in range(1, 60, 3):
        sid = await new_session(spec)
        entries = []
        for index in range(4):
            entries += [
                user(f"step {index} " + "x" * 20),
                assistant("", tool_call(f"c{index}", "bash", command=f"echo {index}")),
                tool_result(f"c{index}", "out " * (index + 3)),
                assistant(f"done {index}"),
            ]
        await spec.call("session/append", {"sessionId": sid, "entries": entries})
        answer = await spec.server.request(
            "session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": keep}
        )
        if "error" in answer:
            assert answer["error"]["code"] == -33020  # nothing to compact: everything fits
            continue
        records = spec.records(sid)
        first_kept = next(r for r in records if r["seq"] == records[-1]["firstKeptSeq"])
        assert first_kept["role"] in ("user", "assistant"), keep
        kept_calls = {
            b["id"]
            for r in records[:-1]
            if r["seq"] >= first_kept["seq"] and r["role"] == "assistant"
            for b in r["content"]
            if b["type"] == "toolCall"
        }
        kept_results = {
            r["toolCallId"] for r in records[:-1] if r["seq"] >= first_kept["seq"] and r["role"] == "toolResult"
        }
        assert kept_results <= kept_calls, keep


def summarizing_client(asked: list[dict[str, Any]], text: str):
    def answer(message: dict[str, Any]) -> Any:
        assert message["method"] == "session/summarize"
        asked.append(message["params"])
        return {"text": text}

    return answer


async def test_s7_14_summary_asked_for_in_the_structured_format(spec: SpecServer):
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    asked: list[dict[str, Any]] = []
    await spec.call_answering(
        "session/compact",
        {"sessionId": sid, "provider": "client", "keepRecentTokens": 10},
        summarizing_client(asked, "## Goal\n- list pods"),
    )
    assert asked[0]["systemPrompt"] == prompts.SYSTEM_PROMPT
    for section in (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert section in asked[0]["prompt"]
    assert "Create a structured context\ncheckpoint summary" in asked[0]["prompt"]
    # Without a model (the offline summarizer) the summary has those sections too.
    other = await new_session(spec)
    await pods_conversation(spec, other)
    offline = await spec.call("session/compact", {"sessionId": other, "provider": "offline", "keepRecentTokens": 1})
    headings = re.findall(r"^## (.+)$", offline["summary"], re.MULTILINE)
    assert headings[:6] == [
        "Goal",
        "Constraints & Preferences",
        "Progress",
        "Key Decisions",
        "Next Steps",
        "Critical Context",
    ]


async def files_session(spec: SpecServer) -> str:
    sid = await new_session(spec)
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                user("Look at the config loader " + "please " * 20),
                assistant("", tool_call("r1", "read", path="src/config/loader.ts")),
                tool_result("r1", "export function load() {}", "read"),
                assistant("", tool_call("r2", "read_file", path="src/agent/loop.ts")),
                tool_result("r2", "loop", "read_file"),
                assistant("", tool_call("e1", "edit", path="src/agent/loop.ts", oldText="a", newText="b")),
                tool_result("e1", "edited", "edit"),
                assistant("Edited the loop. " + "detail " * 30),
                user("Now write the executor " + "please " * 20),
            ],
        },
    )
    return sid


async def test_s7_15_and_s7_16_file_lists_are_cumulative_and_modified_wins(spec: SpecServer):
    sid = await files_session(spec)
    first = await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 40})
    assert first["details"] == {"readFiles": ["src/config/loader.ts"], "modifiedFiles": ["src/agent/loop.ts"]}
    record = spec.records(sid)[-1]
    assert record["readFiles"] == ["src/config/loader.ts"] and record["modifiedFiles"] == ["src/agent/loop.ts"]
    assert "<read-files>\nsrc/config/loader.ts\n</read-files>" in record["summary"]
    assert "<modified-files>\nsrc/agent/loop.ts\n</modified-files>" in record["summary"]
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                assistant("", tool_call("w1", "write", path="src/tools/executor.ts", content="x")),
                tool_result("w1", "written", "write"),
                assistant("", tool_call("r3", "read", path="src/config/loader.ts")),
                tool_result("r3", "again", "read"),
                assistant("", tool_call("e2", "write_file", path="src/config/loader.ts", content="y")),
                tool_result("e2", "written", "write_file"),
                assistant("Wrote it. " + "detail " * 30),
                user("Next, tests " + "please " * 20),
            ],
        },
    )
    second = await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 40})
    record = spec.records(sid)[-1]
    assert record["recordType"] == "compaction" and record["seq"] > 10
    # The loop file only the first compaction saw is still there (S7.15); loader.ts, read and then written,
    # is listed as modified only (S7.16).
    assert record["modifiedFiles"] == ["src/agent/loop.ts", "src/config/loader.ts", "src/tools/executor.ts"]
    assert record["readFiles"] == []
    assert second["details"]["modifiedFiles"] == record["modifiedFiles"]


async def test_s7_17_the_update_prompt_carries_the_previous_summary(spec: SpecServer):
    sid = await files_session(spec)
    asked: list[dict[str, Any]] = []
    await spec.call_answering(
        "session/compact",
        {"sessionId": sid, "provider": "client", "keepRecentTokens": 40},
        summarizing_client(asked, "## Goal\n- FIRST-SUMMARY-MARKER"),
    )
    assert (
        "<previous-summary>" not in asked[0]["prompt"] and "The messages above are a conversation" in asked[0]["prompt"]
    )
    await spec.call(
        "session/append",
        {"sessionId": sid, "entries": [assistant("More work. " + "w " * 60), user("go on " + "z " * 60)]},
    )
    await spec.call_answering(
        "session/compact",
        {"sessionId": sid, "provider": "client", "keepRecentTokens": 40},
        summarizing_client(asked, "## Goal\n- SECOND"),
    )
    prompt = asked[1]["prompt"]
    assert "<previous-summary>\n## Goal\n- FIRST-SUMMARY-MARKER\n</previous-summary>" in prompt
    assert "The messages above are NEW conversation messages" in prompt
    assert "- PRESERVE all existing information from the previous summary" in prompt
    assert asked[1]["previousSummary"] if "previousSummary" in asked[1] else True


async def test_s7_18_the_summarizer_gets_flat_text(spec: SpecServer):
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    await spec.call("session/append", {"sessionId": sid, "entries": [user("Thanks")]})
    asked: list[dict[str, Any]] = []
    await spec.call_answering(
        "session/compact",
        {"sessionId": sid, "provider": "client", "keepRecentTokens": 1},
        summarizing_client(asked, "## Goal\n- pods"),
    )
    conversation = asked[0]["prompt"].split("\n\nThe messages above")[0]
    assert conversation == (
        "[User]: What pods are running?\n"
        "[Assistant]: Let me check.\n"
        '[Assistant tool calls]: bash(command="kubectl get pods")\n'
        "[Tool result]: NAME   READY   STATUS\nnginx  1/1     Running\n"
        "[Assistant]: There is one pod running: nginx, with status Running."
    )
    assert '"role"' not in asked[0]["prompt"] and '{"type"' not in asked[0]["prompt"]
