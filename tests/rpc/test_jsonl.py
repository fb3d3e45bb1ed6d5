"""The newline-delimited framing (``--jsonl``): the same dispatch as LSP framing, one JSON value per line."""

from __future__ import annotations

from pathlib import Path

from store_mode import bring_in

from .harness import RawServer, assistant, snapshot, user


async def test_a_whole_session_over_jsonl(sessions_root: Path):
    server = await RawServer.start(framing="jsonl")
    try:
        assert "result" in await server.initialize(sessions_root)
        created = (await server.request("session/create", {"cwd": "/w", "sessionId": "j"}))["result"]
        appended = await server.request(
            "session/append", {"sessionId": "j", "entries": [user("hi"), assistant("hello")]}
        )
        assert appended["result"]["leafId"] == appended["result"]["entries"][1]["id"]
        context = await server.request("session/buildContext", {"sessionId": "j", "format": "llm"})
        assert [m["role"] for m in context["result"]["messages"]] == ["user", "assistant"]
        assert Path(created["path"]).read_text().count("\n") == 3
        assert (await server.request("shutdown"))["result"] is None
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 0
    finally:
        await server.stop()


async def test_jsonl_bad_lines_blank_lines_and_errors(sessions_root: Path):
    server = await RawServer.start(framing="jsonl")
    try:
        before_init = await server.request("session/list", {})
        assert before_init["error"]["code"] == -32002
        await server.initialize(sessions_root)
        await server.request("session/create", {"cwd": "/w", "sessionId": "j"})
        await server.request("session/append", {"sessionId": "j", "entries": [user("hi"), assistant("hello")]})
        before = snapshot(sessions_root)
        server.send_raw(b"\n\r\n   \n")  # blank lines: ignored, no answer
        server.send_raw(b"{not json}\n")
        parse = await server.response()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        server.send_raw(b'{"jsonrpc":"2.0","id":"crlf","method":"session/getTree","params":{"sessionId":"j"}}\r\n')
        assert len((await server.response())["result"]["nodes"]) == 2
        wrong = await server.request("session/append", {"sessionId": "j", "entries": "nope"})
        assert wrong["error"]["code"] == -32602 and wrong["error"]["data"]["field"] == "entries"
        unknown = await server.request("session/getTree", {"sessionId": "ghost"})
        assert unknown["error"]["code"] == -33001
        assert snapshot(sessions_root) == before
        await server.close_stdin()
        assert await server.wait() == 0
    finally:
        await server.stop()


async def test_jsonl_progress_notifications(sessions_root: Path):
    server = await RawServer.start(framing="jsonl")
    try:
        await server.initialize(sessions_root)
        folder = sessions_root / "--p--"
        folder.mkdir()
        for index in range(20):
            (folder / f"2025-01-01T00-00-00-000Z_p{index}.jsonl").write_text(
                '{"type":"session","version":3,"id":"p%d","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n' % index
            )
        bring_in(sessions_root)
        answer = await server.request("session/list", {"all": True, "workDoneToken": "w"})
        assert len(answer["result"]["sessions"]) == 20
        kinds = [n["params"]["value"]["kind"] for n in server.notifications]
        assert kinds[0] == "begin" and kinds[-1] == "end"
    finally:
        await server.stop()
