"""session/list sees what another program does to the session files behind the sidecar's back.

A second process (as pi would) appends to a session file, creates one, deletes
one and renames one into ``.archive``, each between two lists of a sidecar
whose index is warm: with the folder watches (inotify, where there is one) and
without them (every file checked by size and mtime).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import RawServer

SECOND_WRITER = r"""
import json, os, sys
action, path = sys.argv[1], sys.argv[2]
if action == "append":
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "message", "id": "ext00001", "parentId": None, "timestamp": "2031-01-01T00:00:00.000Z",
                            "message": {"role": "user", "content": "written behind its back", "timestamp": 1924992000000}}) + "\n")
        f.write(json.dumps({"type": "message", "id": "ext00002", "parentId": "ext00001", "timestamp": "2031-01-01T00:00:01.000Z",
                            "message": {"role": "assistant", "content": [{"type": "text", "text": "seen"}], "stopReason": "stop",
                                        "usage": {"totalTokens": 700}, "timestamp": 1924992001000}}) + "\n")
elif action == "create":
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": "external-1", "timestamp": "2030-01-01T00:00:00.000Z",
                            "cwd": "/work/ext"}) + "\n")
        f.write(json.dumps({"type": "message", "id": "e1", "parentId": None, "timestamp": "2030-01-01T00:00:01.000Z",
                            "message": {"role": "user", "content": "made by pi"}}) + "\n")
elif action == "delete":
    os.unlink(path)
elif action == "archive":
    target = sys.argv[3]
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.rename(path, target)
"""


def second_writer(*args: str) -> None:
    subprocess.run([sys.executable, "-c", SECOND_WRITER, *args], check=True, timeout=30)


async def listed(server: RawServer, **params) -> dict[str, dict]:
    answer = await server.request("session/list", {"all": True, "limit": 1000, **params})
    assert "result" in answer, answer
    return {s["sessionId"]: s for s in answer["result"]["sessions"]}


@pytest.mark.parametrize("inotify", ["1", "0"])
async def test_list_sees_each_change_another_process_makes(sessions_root: Path, inotify: str):
    server = await RawServer.start(env={**os.environ, "SESSION_SIDECAR_INOTIFY": inotify})
    try:
        assert "result" in await server.initialize(sessions_root)
        paths = {}
        for number, cwd in enumerate(["/work/a", "/work/a", "/work/b", "/work/b"]):
            sid = f"s{number}"
            created = await server.request("session/create", {"cwd": cwd, "sessionId": sid})
            assert "result" in created, created
            appended = await server.request(
                "session/append",
                {
                    "sessionId": sid,
                    "entries": [
                        {"type": "message", "message": {"role": "user", "content": f"hello {number}"}},
                        {
                            "type": "message",
                            "message": {
                                "role": "assistant",
                                "content": [{"type": "text", "text": "hi"}],
                                "stopReason": "stop",
                                "usage": {"totalTokens": 100 + number},
                            },
                        },
                    ],
                },
            )
            assert "result" in appended, appended
            paths[sid] = Path(created["result"]["path"])
        before = await listed(server)
        assert set(before) == {"s0", "s1", "s2", "s3"}
        assert before["s0"]["messageCount"] == 2
        assert before["s0"]["tokens"] == {"total": 100, "last": 100}
        assert await listed(server) == before  # warm, nothing changed

        second_writer("append", str(paths["s0"]))
        after = await listed(server)
        assert after["s0"]["messageCount"] == 4
        assert after["s0"]["tokens"] == {"total": 800, "last": 700}
        assert after["s0"]["modified"] == "2031-01-01T00:00:01.000Z"
        assert list(after)[0] == "s0"  # newest activity first
        assert (await listed(server, query="behind its back"))["s0"]["snippet"] == "written **behind its back**"

        created = paths["s2"].parent / "2030-01-01T00-00-00-000Z_external-1.jsonl"
        second_writer("create", str(created))
        after = await listed(server)
        assert set(after) == {"s0", "s1", "s2", "s3", "external-1"}
        assert after["external-1"]["firstMessage"] == "made by pi"
        assert after["external-1"]["cwd"] == "/work/ext"

        second_writer("delete", str(paths["s1"]))
        assert set(await listed(server)) == {"s0", "s2", "s3", "external-1"}

        archived = sessions_root / ".archive" / paths["s3"].parent.name / paths["s3"].name
        second_writer("archive", str(paths["s3"]), str(archived))
        assert set(await listed(server)) == {"s0", "s2", "external-1"}
        with_archive = await listed(server, includeArchived=True)
        assert set(with_archive) == {"s0", "s2", "s3", "external-1"}
        assert with_archive["s3"]["archived"] is True
        assert with_archive["s3"]["path"] == str(archived)

        # And a second change to a folder that was just looked at again.
        second_writer("append", str(paths["s2"]))
        assert (await listed(server))["s2"]["messageCount"] == 4
    finally:
        await server.stop()
