"""Order per session, overlap across sessions, cancellation and work-done progress, on a real sidecar."""

from __future__ import annotations

import json
from pathlib import Path

from store_mode import bring_in, stored_state

from .harness import RawServer, RpcTestClient, assistant, frame, user


def write_big_session(root: Path, session_id: str = "big", count: int = 60_000) -> Path:
    """A long linear session written straight to disk: opening it takes a noticeable while."""
    path = root / "--w--" / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
        )
    ]
    parent = None
    for index in range(count):
        entry_id = f"{index:08x}"
        role = "user" if index % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": "x" * 100}]}
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2025-01-01T00:00:00.000Z",
                    "message": message,
                }
            )
        )
        parent = entry_id
    path.write_text("\n".join(lines) + "\n")
    return path


def write_many_sessions(root: Path, count: int) -> None:
    folder = root / "--many--"
    folder.mkdir(parents=True)
    for index in range(count):
        header = {
            "type": "session",
            "version": 3,
            "id": f"m{index}",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": "/many",
        }
        body = {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": f"question {index}"},
        }
        (folder / f"2025-01-01T00-00-00-000Z_m{index}.jsonl").write_text(
            json.dumps(header) + "\n" + json.dumps(body) + "\n"
        )


async def test_requests_on_one_session_run_in_the_order_sent(raw: RawServer):
    created = (await raw.request("session/create", {"cwd": "/w", "sessionId": "order"}))["result"]
    await raw.request("session/append", {"sessionId": "order", "entries": [user("start"), assistant("ok")]})
    for index in range(100):  # pipelined: nobody waits for an answer
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "session/append",
                "params": {"sessionId": "order", "entries": [user(f"m{index}")]},
            }
        )
    answers = {a["id"]: a["result"] for a in [await raw.response() for _ in range(100)]}
    for index in range(1, 100):
        assert answers[index]["entries"][0]["parentId"] == answers[index - 1]["entries"][0]["id"]
    written = [json.loads(line) for line in Path(created["path"]).read_text().splitlines()[3:]]
    assert [e["message"]["content"][0]["text"] for e in written] == [f"m{i}" for i in range(100)]


async def test_a_long_request_on_one_session_does_not_block_another(raw: RawServer, sessions_root: Path):
    write_big_session(sessions_root)
    bring_in(sessions_root)
    await raw.request("session/create", {"cwd": "/w", "sessionId": "small"})
    raw.send({"jsonrpc": "2.0", "id": "slow", "method": "session/open", "params": {"sessionId": "big"}})
    raw.send({"jsonrpc": "2.0", "id": "quick", "method": "session/getTree", "params": {"sessionId": "small"}})
    first, second = await raw.response(), await raw.response()
    assert first["id"] == "quick" and second["id"] == "slow"
    assert second["result"]["entryCount"] == 60_000


async def test_cancelling_a_queued_request_answers_32800_at_once(raw: RawServer, sessions_root: Path):
    write_big_session(sessions_root)
    bring_in(sessions_root)
    before = stored_state(sessions_root, sessions_root.parent / "stored")
    raw.send({"jsonrpc": "2.0", "id": "slow", "method": "session/open", "params": {"sessionId": "big"}})
    raw.send(
        {"jsonrpc": "2.0", "id": "queued", "method": "session/setName", "params": {"sessionId": "big", "name": "x"}}
    )
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "queued"}})
    first, second = await raw.response(), await raw.response()
    assert first["id"] == "queued" and first["error"]["code"] == -32800
    assert first["error"]["data"]["kind"] == "requestCancelled"
    assert second["id"] == "slow" and "result" in second
    assert stored_state(sessions_root, sessions_root.parent / "stored") == before  # the name was never written


async def test_cancelling_a_running_list_stops_it_between_files(raw: RawServer, sessions_root: Path):
    write_many_sessions(sessions_root, 3000)
    raw.send(
        {"jsonrpc": "2.0", "id": "scan", "method": "session/list", "params": {"all": True, "workDoneToken": "tok"}}
    )
    begin = await raw.receive()
    assert begin["method"] == "$/progress" and begin["params"] == {
        "token": "tok",
        "value": {"kind": "begin", "title": "session/list", "percentage": 0},
    }
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "scan"}})
    answer = await raw.response()
    assert answer["id"] == "scan" and answer["error"]["code"] == -32800
    kinds = [n["params"]["value"]["kind"] for n in raw.notifications]
    assert kinds[-1] == "end"  # progress is closed before the answer
    # The server is fine afterwards and lists everything when not cancelled.
    listed = await raw.request("session/list", {"all": True, "limit": 1000})
    assert len(listed["result"]["sessions"]) == 1000 and listed["result"]["nextCursor"]


async def test_cancel_for_an_unknown_or_finished_request_is_harmless(raw: RawServer):
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "never-sent"}})
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {}})
    assert "result" in await raw.request("session/list", {})


async def test_progress_goes_begin_report_end_before_the_result(client: RpcTestClient, sessions_root: Path):
    write_many_sessions(sessions_root, 300)
    result = await client.call("session/list", {"all": True, "workDoneToken": 7})
    assert len(result["sessions"]) == 50
    values = [p["value"] for p in client.progress if p["token"] == 7]
    assert values[0]["kind"] == "begin" and values[-1]["kind"] == "end"
    reports = [v for v in values if v["kind"] == "report"]
    assert reports and all(0 <= v["percentage"] <= 100 for v in reports)
    assert [v["percentage"] for v in reports] == sorted(v["percentage"] for v in reports)
    assert "of 300 sessions" in reports[-1]["message"]


async def test_no_progress_without_a_token(client: RpcTestClient, sessions_root: Path):
    write_many_sessions(sessions_root, 50)
    await client.call("session/list", {"all": True})
    assert client.progress == []


async def test_a_cheap_append_sent_right_after_a_queued_call_still_waits_its_turn(raw: RawServer):
    # An append is answered inline when nothing is in flight; a buildContext read
    # in the same chunk just before it has not taken its turn yet, and must see
    # the session as it was when it was sent.
    await raw.request("session/create", {"cwd": "/w", "sessionId": "turns"})
    await raw.request("session/append", {"sessionId": "turns", "entries": [user("start"), assistant("ok")]})
    for round_ in range(20):
        raw.send_raw(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": f"ctx{round_}",
                    "method": "session/buildContext",
                    "params": {"sessionId": "turns"},
                }
            )
            + frame(
                {
                    "jsonrpc": "2.0",
                    "id": f"add{round_}",
                    "method": "session/append",
                    "params": {"sessionId": "turns", "entries": [user(f"late {round_}")]},
                }
            )
        )
        answers = {a["id"]: a for a in [await raw.response(), await raw.response()]}
        texts = [m["content"] for m in answers[f"ctx{round_}"]["result"]["messages"] if m["role"] == "user"]
        assert f"late {round_}" not in str(texts)
        assert f"late {round_ - 1}" in str(texts) or round_ == 0
