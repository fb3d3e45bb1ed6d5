"""What a client meets at the framing level: the sidecar speaks the framing the client writes, and
two requests with one id in flight are told apart (the second refused, the first answered)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from .harness import SERVER, RawServer, frame, user

INITIALIZE = {"clientInfo": {"name": "t"}, "protocolVersion": "1.0"}


def _request(msg_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def _conversation(root: Path) -> list[dict[str, Any]]:
    return [
        _request(1, "initialize", {**INITIALIZE, "sessionRoot": str(root)}),
        _request(2, "session/create", {"cwd": "/w", "sessionId": "s"}),
        _request(3, "session/list", {}),
        _request(4, "shutdown", None),
        {"jsonrpc": "2.0", "method": "exit"},
    ]


def _answers_by_id(output: bytes) -> dict[Any, dict[str, Any]]:
    return {message["id"]: message for message in map(json.loads, output.splitlines())}


def test_json_lines_to_a_sidecar_started_without_jsonl_are_served(tmp_path: Path):
    """It read them as LSP headers and answered nothing the client could use."""
    data = b"".join(frame(message, "jsonl") for message in _conversation(tmp_path))
    done = subprocess.run([*SERVER, "serve"], input=data, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = _answers_by_id(done.stdout)  # answered in JSON lines too
    assert answers[3]["result"]["sessions"] == [] and answers[4]["result"] is None


def test_stdin_from_a_file_is_served_in_the_framing_it_holds(tmp_path: Path):
    """Not a pipe: a reader thread reads it, and the framing is still told from its first byte."""
    for framing in ("jsonl", "lsp"):
        root = tmp_path / framing
        requests = tmp_path / f"requests.{framing}"
        requests.write_bytes(b"".join(frame(message, framing) for message in _conversation(root)))
        with requests.open("rb") as stdin:
            done = subprocess.run([*SERVER, "serve"], stdin=stdin, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        body = (
            done.stdout
            if framing == "jsonl"
            else b"\n".join(part.split(b"\r\n\r\n", 1)[1] for part in done.stdout.split(b"Content-Length: ")[1:])
        )
        assert _answers_by_id(body)[2]["result"]["sessionId"] == "s"


async def test_an_id_used_twice_in_flight_refuses_the_second_and_answers_the_first(sessions_root: Path):
    raw = await RawServer.start()
    try:
        await raw.initialize(sessions_root)
        await raw.request("session/create", {"cwd": "/w", "sessionId": "s"})
        # Two appends with one id in one write: the second is read while the first is in flight (in a
        # run of appends, or on its session's queue), whichever answer comes out first.
        raw.send_raw(
            frame(_request("same", "session/append", {"sessionId": "s", "entries": [user("first")]}))
            + frame(_request("same", "session/append", {"sessionId": "s", "entries": [user("second")]}))
        )
        answers = [await raw.response(), await raw.response()]
        assert [answer["id"] for answer in answers] == ["same", "same"]
        [ran] = [answer for answer in answers if "result" in answer]
        [refused] = [answer["error"] for answer in answers if "error" in answer]
        assert len(ran["result"]["entries"]) == 1
        assert refused["code"] == -32600 and "already used by a request in flight" in refused["message"]
        assert refused["data"] == {
            "kind": "invalidRequest",
            "reason": "duplicateId",
            "id": "same",
            "method": "session/append",
        }
        entries = (await raw.request("session/getEntries", {"sessionId": "s"}))["result"]["entries"]
        assert [entry["message"]["content"][0]["text"] for entry in entries if entry["type"] == "message"] == ["first"]
        # Once answered, the id is free again.
        again = await raw.request("session/append", {"sessionId": "s", "entries": [user("third")]}, msg_id="same")
        assert "result" in again
        # Pipelined appends wait in a run, answered together: an id of the run used again is refused too.
        raw.send_raw(
            b"".join(
                frame(_request(msg_id, "session/append", {"sessionId": "s", "entries": [user(msg_id)]}))
                for msg_id in ("r0", "r1", "r2", "r1")
            )
        )
        answers = [await raw.response() for _ in range(4)]
        assert sorted(answer["id"] for answer in answers if "result" in answer) == ["r0", "r1", "r2"]
        assert [(answer["id"], answer["error"]["data"]["reason"]) for answer in answers if "error" in answer] == [
            ("r1", "duplicateId")
        ]
        entries = (await raw.request("session/getEntries", {"sessionId": "s"}))["result"]["entries"]
        assert [entry["message"]["content"][0]["text"] for entry in entries][-3:] == ["r0", "r1", "r2"]
    finally:
        await raw.stop()
