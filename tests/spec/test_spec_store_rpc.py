"""The rest of the protocol on a spec root: what the format refuses, archive/delete/restore, fork,
metadata.json rebuilt, the one-writer rule."""

from __future__ import annotations

import json
from pathlib import Path

from rpc.harness import assistant, user

from .helpers import SpecServer
from .test_scenarios import new_session, pods_conversation


async def test_what_the_format_cannot_hold_is_refused_naming_the_format_and_nothing_is_written(spec: SpecServer):
    sid = await new_session(spec)
    await spec.call("session/append", {"sessionId": sid, "entries": [user("q"), assistant("a")]})
    before = (spec.folder(sid) / "session.jsonl").read_bytes(), spec.metadata(sid)
    refused = [
        ("session/setLabel", {"sessionId": sid, "entryId": "00000001", "label": "start"}, "a label"),
        ("session/branch", {"sessionId": sid, "entryId": "00000001"}, "a branch"),
        ("session/append", {"sessionId": sid, "parentId": "00000001", "entries": [user("other way")]}, "a branch"),
        (
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    user("fine"),
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "x"}],
                        },
                    },
                ],
            },
            "thinking content block",
        ),
        (
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    {
                        "type": "message",
                        "message": {
                            "role": "user",
                            "content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
                        },
                    }
                ],
            },
            "image content block",
        ),
        (
            "session/append",
            {"sessionId": sid, "entries": [{"type": "custom", "customType": "x", "data": {}}]},
            "custom",
        ),
        (
            "session/append",
            {"sessionId": sid, "entries": [{"type": "thinking_level_change", "thinkingLevel": "high"}]},
            "thinking_level_change",
        ),
        (
            "session/append",
            {"sessionId": sid, "entries": [{"type": "branch_summary", "fromId": "00000001", "summary": "s"}]},
            "branch summary",
        ),
        ("session/append", {"sessionId": sid, "entries": [{**user("own id"), "id": "abcdef12"}]}, "entry id"),
        ("session/move", {"sessionId": sid, "cwd": "/elsewhere"}, "working folder"),
    ]
    for method, params, what in refused:
        error = await spec.error(method, params)
        assert error["code"] == -33090 and error["data"]["format"] == "spec", (method, error)
        assert "spec format" in error["message"] and what in error["message"], (what, error["message"])
    assert ((spec.folder(sid) / "session.jsonl").read_bytes(), spec.metadata(sid)) == before
    tree = await spec.call("session/getTree", {"sessionId": sid})
    assert [n["id"] for n in tree["nodes"]] == ["00000001", "00000002"] and tree["leafId"] == "00000002"
    # What it can hold still goes in after a refusal, and a name and a model go to metadata.json.
    await spec.call("session/setName", {"sessionId": sid, "name": "pods work"})
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [{"type": "model_change", "provider": "anthropic", "modelId": "claude-x"}, user("next")],
        },
    )
    metadata = spec.metadata(sid)
    assert metadata["name"] == "pods work" and metadata["model"] == "claude-x" and metadata["messageCount"] == 3
    assert [r["seq"] for r in spec.records(sid)] == [1, 2, 3]


async def test_archive_unarchive_delete_restore_move_the_folder(spec: SpecServer):
    sid = await new_session(spec)
    await pods_conversation(spec, sid)
    archived = await spec.call("session/archive", {"sessionId": sid})
    assert archived["path"] == str(spec.root / ".archive" / sid) and not spec.folder(sid).exists()
    assert [s["sessionId"] for s in (await spec.call("session/list", {}))["sessions"]] == []
    listed = (await spec.call("session/list", {"includeArchived": True}))["sessions"]
    assert [(s["sessionId"], s["archived"]) for s in listed] == [(sid, True)]
    await spec.call("session/unarchive", {"sessionId": sid})
    deleted = await spec.call("session/delete", {"sessionId": sid})
    trashed = spec.root / ".trash" / sid
    assert deleted["trashPath"] == str(trashed) and (trashed / "session.jsonl").is_file()
    assert (await spec.error("session/open", {"sessionId": sid}))["code"] == -33001
    await spec.call("session/restore", {"sessionId": sid})
    context = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
    assert len(context["messages"]) == 4


async def test_fork_copies_the_records_up_to_an_entry(spec: SpecServer):
    sid = await new_session(spec, name="original")
    await pods_conversation(spec, sid)
    await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10})
    await spec.call("session/append", {"sessionId": sid, "entries": [user("And services?"), assistant("None.")]})
    forked = await spec.call("session/fork", {"sessionId": sid, "entryId": "00000006"})
    fid = forked["sessionId"]
    assert forked["path"] == str(spec.folder(fid)) and fid != sid
    original, copy = spec.records(sid), spec.records(fid)
    strip = lambda r: {k: v for k, v in r.items() if k != "timestamp"}  # noqa: E731
    assert [strip(r) for r in copy] == [strip(r) for r in original[:6]]
    assert spec.metadata(fid)["messageCount"] == 5 and spec.metadata(fid)["name"] == "original"
    ctx = await spec.call("session/buildContext", {"sessionId": fid, "format": "llm"})
    assert ctx["messages"][-1]["content"][0]["text"] == "And services?"
    error = await spec.error("session/fork", {"sessionId": sid, "entryId": "00000003"})
    assert error["code"] == -32602  # a tool result: its call would be cut off


async def test_metadata_json_missing_or_damaged_is_rebuilt_from_the_log(sessions_root: Path):
    spec = await SpecServer.start(sessions_root)
    ids = [await new_session(spec) for _ in range(2)]
    for sid in ids:
        await spec.call(
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    {**user("q"), "timestamp": "2025-05-01T00:00:00.000Z"},
                    {**assistant("a"), "timestamp": "2025-05-01T00:00:09.000Z"},
                ],
            },
        )
    await spec.stop()
    (sessions_root / ids[0] / "metadata.json").unlink()
    (sessions_root / ids[1] / "metadata.json").write_text('{"id": "truncated')
    spec = await SpecServer.start(sessions_root)
    try:
        listed = (await spec.call("session/list", {}))["sessions"]
        assert sorted(s["sessionId"] for s in listed) == sorted(ids)
        assert all(s["messageCount"] == 2 and s["modified"] == "2025-05-01T00:00:09.000Z" for s in listed)
        for sid in ids:
            await spec.call("session/open", {"sessionId": sid})
            metadata = spec.metadata(sid)
            assert metadata["id"] == sid and metadata["messageCount"] == 2
            assert metadata["lastMessageAt"] == "2025-05-01T00:00:09.000Z" and metadata["source"] == "interactive"
    finally:
        await spec.stop()


async def test_a_second_sidecar_is_refused_while_one_writes(sessions_root: Path):
    first = await SpecServer.start(sessions_root)
    second = await SpecServer.start(sessions_root)
    try:
        sid = await new_session(first)
        await first.call("session/append", {"sessionId": sid, "entries": [user("mine")]})
        error = await second.error("session/open", {"sessionId": sid})
        assert error["code"] == -33004
        read = await second.call("session/open", {"sessionId": sid, "readOnly": True})
        assert read["entryCount"] == 1
        refused = await second.error("session/append", {"sessionId": sid, "entries": [user("theirs")]})
        assert refused["code"] == -33010
        assert [r["content"][0]["text"] for r in first.records(sid)] == ["mine"]
    finally:
        await first.stop()
        await second.stop()


async def test_damaged_lines_are_counted_and_skipped(sessions_root: Path):
    spec = await SpecServer.start(sessions_root)
    sid = await new_session(spec)
    await spec.call("session/append", {"sessionId": sid, "entries": [user("one"), assistant("two")]})
    await spec.stop()
    log = sessions_root / sid / "session.jsonl"
    lines = log.read_bytes().splitlines()
    log.write_bytes(lines[0] + b"\n" + b'{"recordType":"mystery","schemaVersion":1,"seq":9}\n' + lines[1] + b"\n")
    spec = await SpecServer.start(sessions_root)
    try:
        opened = await spec.call("session/open", {"sessionId": sid})
        assert opened["parseErrors"] == 1 and opened["entryCount"] == 2
        await spec.call("session/append", {"sessionId": sid, "entries": [user("three")]})
        assert json.loads(log.read_bytes().splitlines()[-1])["seq"] == 3
    finally:
        await spec.stop()


async def test_metadata_json_left_behind_by_a_crash_is_caught_up_keeping_what_only_it_knows(sessions_root: Path):
    spec = await SpecServer.start(sessions_root)
    sid = await new_session(spec, name="kept name", cronJobId="job-7")
    await spec.call("session/append", {"sessionId": sid, "entries": [user("q1")]})
    stale = (sessions_root / sid / "metadata.json").read_bytes()
    await spec.call(
        "session/append", {"sessionId": sid, "entries": [{**assistant("a1"), "timestamp": "2025-06-01T00:00:00.000Z"}]}
    )
    await spec.stop()
    (sessions_root / sid / "metadata.json").write_bytes(stale)  # the records went out, the metadata did not
    spec = await SpecServer.start(sessions_root)
    try:
        await spec.call("session/open", {"sessionId": sid})
        metadata = spec.metadata(sid)
        assert metadata["messageCount"] == 2 and metadata["lastMessageAt"] == "2025-06-01T00:00:00.000Z"
        assert metadata["name"] == "kept name" and metadata["cronJobId"] == "job-7"
    finally:
        await spec.stop()
