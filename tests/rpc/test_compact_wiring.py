"""session/compact through the rpc layer: on the loop in the session's turn, progress, autoCompact, the client provider."""

from __future__ import annotations

from pathlib import Path

from .harness import RawServer, assistant, user

SETTINGS = {"compaction": {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300}}


def turns(count: int) -> list[dict]:
    entries = []
    for index in range(count):
        entries += [user(f"question {index} " + "word " * 150), assistant(f"answer {index} " + "word " * 150)]
    return entries


async def next_message(server: RawServer) -> dict:
    """The next message from the server, counting those that came before the last response."""
    if server.notifications:
        return server.notifications.pop(0)
    return await server.receive()


async def start(sessions_root: Path, provider: str = "offline", auto: bool = False) -> RawServer:
    server = await RawServer.start()
    settings = {"compaction": {**SETTINGS["compaction"], "autoCompact": auto}, "providers": {"default": provider}}
    answer = await server.initialize(sessions_root, settings=settings)
    assert "result" in answer, answer
    await server.request("session/create", {"cwd": "/w", "sessionId": "c"})
    return server


async def test_compact_reports_progress_and_writes_a_compaction_entry(sessions_root: Path):
    server = await start(sessions_root)
    try:
        await server.request("session/append", {"sessionId": "c", "entries": turns(6)})
        answer = await server.request("session/compact", {"sessionId": "c", "workDoneToken": "k"})
        result = answer["result"]
        assert result["provider"] == "offline" and result["summary"] and result["tokensAfter"] < result["tokensBefore"]
        kinds = [n["params"]["value"]["kind"] for n in server.notifications if n["method"] == "$/progress"]
        assert kinds[0] == "begin" and kinds[-1] == "end"
        entries = (await server.request("session/getEntries", {"sessionId": "c", "ids": [result["entryId"]]}))["result"]
        assert entries["entries"][0]["type"] == "compaction"
    finally:
        await server.stop()


async def test_auto_compact_notifies_did_compact(sessions_root: Path):
    server = await start(sessions_root, auto=True)
    try:
        appended = await server.request("session/append", {"sessionId": "c", "entries": turns(10)})
        assert appended["result"]["shouldCompact"] is True
        create = await next_message(server)
        assert create["method"] == "window/workDoneProgress/create" and "id" in create
        token = create["params"]["token"]
        server.send({"jsonrpc": "2.0", "id": create["id"], "result": None})
        progress = []
        note = await server.receive()
        while note["method"] == "$/progress":
            assert note["params"]["token"] == token
            progress.append(note["params"]["value"]["kind"])
            note = await server.receive()
        assert progress[0] == "begin" and progress[-1] == "end" and "report" in progress
        assert note["method"] == "session/didCompact" and note["params"]["sessionId"] == "c"
        assert note["params"]["result"]["entryId"]
    finally:
        await server.stop()


async def test_auto_compact_runs_without_progress_when_the_client_refuses_the_token(sessions_root: Path):
    server = await start(sessions_root, auto=True)
    try:
        await server.request("session/append", {"sessionId": "c", "entries": turns(10)})
        create = await next_message(server)
        assert create["method"] == "window/workDoneProgress/create"
        server.send({"jsonrpc": "2.0", "id": create["id"], "error": {"code": -32601, "message": "unknown method"}})
        note = await server.receive()
        assert note["method"] == "session/didCompact" and note["params"]["result"]["entryId"]
    finally:
        await server.stop()


async def test_the_client_provider_asks_the_client_with_session_summarize(sessions_root: Path):
    server = await start(sessions_root, provider="client")
    try:
        await server.request("session/append", {"sessionId": "c", "entries": turns(6)})
        server.send({"jsonrpc": "2.0", "id": "compact", "method": "session/compact", "params": {"sessionId": "c"}})
        ask = await server.receive()
        while "method" in ask and ask["method"] == "$/progress":
            ask = await server.receive()
        assert ask["method"] == "session/summarize" and "id" in ask and ask["params"]["prompt"]
        server.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"text": "SUMMARY FROM THE CLIENT"}})
        answer = await server.response()
        assert answer["id"] == "compact" and answer["result"]["summary"].startswith("SUMMARY FROM THE CLIENT")
    finally:
        await server.stop()


async def test_branch_with_summarize_writes_a_branch_summary_through_the_server(sessions_root: Path):
    server = await start(sessions_root)
    try:
        appended = await server.request("session/append", {"sessionId": "c", "entries": turns(3)})
        first_answer = appended["result"]["entries"][1]["id"]
        answer = await server.request(
            "session/branch", {"sessionId": "c", "entryId": first_answer, "summarize": True, "provider": "offline"}
        )
        assert "result" in answer, answer
        summary_id = answer["result"]["summaryEntryId"]
        assert answer["result"]["leafId"] == summary_id
        entries = (await server.request("session/getEntries", {"sessionId": "c", "ids": [summary_id]}))["result"][
            "entries"
        ]
        assert (
            entries[0]["type"] == "branch_summary" and entries[0]["parentId"] == first_answer and entries[0]["summary"]
        )
    finally:
        await server.stop()


async def test_cancelling_a_compaction_while_the_client_summarizes_cancels_the_summarize_request(sessions_root: Path):
    server = await start(sessions_root, provider="client")
    try:
        await server.request("session/append", {"sessionId": "c", "entries": turns(6)})
        server.send({"jsonrpc": "2.0", "id": "compact", "method": "session/compact", "params": {"sessionId": "c"}})
        ask = await next_message(server)
        while ask.get("method") == "$/progress":
            ask = await next_message(server)
        assert ask["method"] == "session/summarize"
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "compact"}})
        seen = []
        while True:
            message = await server.receive()
            seen.append(message)
            if message.get("id") == "compact":
                break
        assert message["error"]["code"] == -32800
        cancels = [m for m in seen if m.get("method") == "$/cancelRequest"]
        assert cancels and cancels[0]["params"]["id"] == ask["id"]
    finally:
        await server.stop()
