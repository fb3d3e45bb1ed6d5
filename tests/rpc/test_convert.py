"""session/convert and `session-sidecar convert`: pi -> spec -> pi keeps everything the spec format can hold,
and lists what it could not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import PI_FIXTURES as FIXTURES
from spec.helpers import llm_texts
from store_mode import bring_in, place

from rpc.harness import RawServer, assistant, tool_call, user


async def pi_server(root: Path, **settings: Any) -> RawServer:
    server = await RawServer.start()
    assert "result" in await server.initialize(root, settings={"store": settings})
    return server


async def call(server: RawServer, method: str, params: Any) -> Any:
    answer = await server.request(method, params)
    assert "result" in answer, answer
    return answer["result"]


def without_what_spec_drops(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An LLM context with the blocks the spec format has no place for (thinking, images) taken out."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [b for b in content if b.get("type") in ("text", "toolCall")]
        out.append({**message, "content": content})
    return out


def tool_result(call_id: str, text: str, name: str) -> dict[str, Any]:
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


async def test_pi_to_spec_to_pi_keeps_what_the_spec_holds_and_lists_the_rest(tmp_path: Path):
    pi_root, spec_root, back_root = tmp_path / "pi", tmp_path / "spec", tmp_path / "back"
    for root in (pi_root, spec_root, back_root):
        root.mkdir()
    server = await pi_server(pi_root, allowExternalPaths=True)
    try:
        refused = await RawServer.start()
        try:
            await refused.initialize(pi_root)
            answer = await refused.request(
                "session/convert", {"path": str(spec_root), "to": "pi", "targetRoot": str(back_root)}
            )
            assert answer["error"]["code"] == -33007  # outside the root: only with store.allowExternalPaths
        finally:
            await refused.stop()
        sid = (await call(server, "session/create", {"cwd": "/project", "sessionId": "conv-1", "name": "refactor"}))[
            "sessionId"
        ]
        first = await call(
            server,
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    user("Read the loader"),
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "content": [
                                {"type": "thinking", "thinking": "I should read it"},
                                {"type": "text", "text": "Reading."},
                                {
                                    "type": "toolCall",
                                    "id": "c1",
                                    "name": "read",
                                    "arguments": {"path": "src/loader.ts"},
                                },
                            ],
                        },
                    },
                    tool_result("c1", "export function load() {}\n" + "// the loader's notes\n" * 120, "read"),
                    assistant(
                        "It exports load().",
                    ),
                ],
            },
        )
        ids = [e["id"] for e in first["entries"]]
        await call(server, "session/setLabel", {"sessionId": sid, "entryId": ids[0], "label": "start"})
        await call(
            server,
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    {"type": "custom", "customType": "my-ext", "data": {"k": 1}},
                    {"type": "model_change", "provider": "anthropic", "modelId": "claude-test"},
                    user("Now edit it " + "please " * 40),
                    assistant("", tool_call("c2", "edit", path="src/loader.ts", oldText="a", newText="b")),
                    tool_result("c2", "edited", "edit"),
                    assistant("Edited. " + "detail " * 40),
                ],
            },
        )
        main_leaf = (await call(server, "session/getTree", {"sessionId": sid}))["leafId"]
        await call(server, "session/branch", {"sessionId": sid, "entryId": ids[1]})
        alt = await call(server, "session/append", {"sessionId": sid, "entries": [user("an abandoned idea")]})
        await call(server, "session/branch", {"sessionId": sid, "entryId": main_leaf})
        compacted = await call(
            server, "session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 60}
        )
        await call(server, "session/append", {"sessionId": sid, "entries": [user("Thanks"), assistant("Done.")]})
        original = await call(server, "session/buildContext", {"sessionId": sid, "format": "llm"})

        converted = await call(
            server, "session/convert", {"sessionId": sid, "to": "spec", "targetRoot": str(spec_root)}
        )
        assert converted["format"] == "spec" and Path(converted["path"]).parent == spec_root
        left = {item["what"]: item["entryIds"] for item in converted["leftOut"]}
        branches = next(ids for what, ids in left.items() if "other branches" in what)
        assert branches == [alt["entries"][0]["id"]]
        assert any("label" in what for what in left)
        assert left["a thinking content block (assistant message)"] == [ids[1]]
        assert any("custom entry" in what for what in left)
        assert any("/project" in what for what in left)  # the working folder
        folder = Path(converted["path"])
        records = [json.loads(line) for line in (folder / "session.jsonl").read_bytes().splitlines()]
        assert converted["written"] == len(records) == 11  # 10 messages and the compaction
        assert [r["seq"] for r in records] == list(range(1, 12))
        compaction = next(r for r in records if r["recordType"] == "compaction")
        assert compaction["summary"] == compacted["summary"] and compaction["modifiedFiles"] == ["src/loader.ts"]
        metadata = json.loads((folder / "metadata.json").read_text())
        assert metadata["name"] == "refactor" and metadata["model"] == "claude-test" and metadata["messageCount"] == 10

        back = await call(
            server,
            "session/convert",
            {"path": str(folder), "to": "pi", "targetRoot": str(back_root), "cwd": "/project"},
        )
        assert back["format"] == "pi" and back["leftOut"] == []
    finally:
        await server.stop()
    bring_in(back_root)  # the converted file as a session of the store (on PostgreSQL: migrated in)
    server = await pi_server(back_root)
    try:
        opened = await call(server, "session/open", {"path": place(back_root, Path(back["path"]))})
        assert opened["header"]["cwd"] == "/project"
        again = await call(server, "session/buildContext", {"sessionId": opened["sessionId"], "format": "llm"})
        assert llm_texts(again["messages"]) == llm_texts(without_what_spec_drops(original["messages"]))
        listed = (await call(server, "session/list", {"all": True}))["sessions"]
        assert listed[0]["name"] == "refactor"
        entries = (await call(server, "session/getEntries", {"sessionId": opened["sessionId"]}))["entries"]
        kept = next(e for e in entries if e["type"] == "compaction")["firstKeptEntryId"]
        assert any(e["id"] == kept for e in entries)
        assert all(e["parentId"] is None or any(p["id"] == e["parentId"] for p in entries) for e in entries)
    finally:
        await server.stop()


@pytest.mark.parametrize("fixture", ["before-compaction.jsonl", "large-session.jsonl"])
def test_a_real_pi_session_round_trips_through_the_command(tmp_path: Path, fixture: str):
    pi_root, spec_root, back_root = tmp_path / "pi", tmp_path / "spec", tmp_path / "back"
    source = pi_root / "--project--" / fixture
    source.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / fixture, source)
    from sidecar.store.base import FsyncPolicy
    from sidecar.store.files.session import FileSession as Session

    Session.load(source, FsyncPolicy.NEVER)[0].close()  # migrated to v3 on disk: its entry ids stay the same
    command = [sys.executable, "-m", "sidecar"]
    to_spec = subprocess.run(
        [*command, "convert", "--root", str(pi_root), "--to", "spec", "--target-root", str(spec_root), str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert to_spec.returncode == 0, to_spec.stderr
    result = json.loads(to_spec.stdout)
    folder = Path(result["path"])
    for line in (folder / "session.jsonl").read_bytes().splitlines():
        record = json.loads(line)
        assert record["schemaVersion"] == 1 and isinstance(record.get("content", []), list)
    to_pi = subprocess.run(
        [*command, "convert", "--to", "pi", "--target-root", str(back_root), "--cwd", "/project", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert to_pi.returncode == 0, to_pi.stderr
    back = json.loads(to_pi.stdout)
    again = subprocess.run(
        [*command, "convert", "--to", "pi", "--target-root", str(back_root), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1 and "exists already" in again.stderr  # converting twice does not duplicate

    from sidecar.context.build import build_context
    from sidecar.context.llm import convert_to_llm

    contexts = []
    for path in (source, Path(back["path"])):
        session, _ = Session.load(path, FsyncPolicy.NEVER, read_only=True)
        contexts.append(convert_to_llm(build_context(session.tree.path(session.leaf_id)).messages))
        session.close()
    assert len(contexts[1]) > 100
    # The original's context without what the conversion said it left out, message by message.
    gone = {i for item in result["leftOut"] if item["kind"] == "entry" for i in item["entryIds"]}
    assert all(item["kind"] in ("entry", "part", "field", "branch", "session") for item in result["leftOut"])
    session, _ = Session.load(source, FsyncPolicy.NEVER, read_only=True)
    path = [e for e in session.tree.path(session.leaf_id) if e.id not in gone]
    session.close()
    expected = convert_to_llm(build_context(path).messages)
    assert llm_texts(contexts[1]) == llm_texts(without_what_spec_drops(expected))


async def test_a_pi_root_refuses_what_only_spec_roots_keep(tmp_path: Path):
    server = await pi_server(tmp_path)
    try:
        for params in ({"source": "cron"}, {"cronJobId": "job"}):
            answer = await server.request("session/create", {"cwd": "/w", **params})
            assert answer["error"]["code"] == -32602 and "spec-format roots only" in answer["error"]["message"]
        assert list(tmp_path.iterdir()) == [] or all(p.name.startswith(".") for p in tmp_path.iterdir())
    finally:
        await server.stop()
