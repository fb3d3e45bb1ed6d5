"""Reopening a large session in a new sidecar: from the tree cache the last one left, and after a kill."""

from __future__ import annotations

import signal
from pathlib import Path

from .harness import RawServer, assistant, tool_call, tool_result, user

BIG_OUTPUT = "".join(f"{n:6d}  a line of tool output that makes the session large\n" for n in range(150))


async def started(root: Path) -> RawServer:
    server = await RawServer.start()
    answer = await server.initialize(root)
    assert "result" in answer, answer
    return server


async def call(server: RawServer, method: str, params: dict) -> dict:
    answer = await server.request(method, params)
    assert "result" in answer, (method, answer)
    return answer["result"]


async def grow(server: RawServer, sid: str, turns: int, tag: str) -> None:
    for n in range(turns):
        await call(
            server,
            "session/append",
            {
                "sessionId": sid,
                "entries": [
                    user(f"{tag} question {n}"),
                    assistant("", tool_call(f"{tag}-{n}", "read", path=f"f{n}.py")),
                    tool_result(f"{tag}-{n}", BIG_OUTPUT),
                    assistant(f"{tag} answer {n}"),
                ],
            },
        )


async def test_a_new_sidecar_reopens_from_the_cache_and_after_a_kill_reads_what_was_added(sessions_root: Path):
    first = await started(sessions_root)
    try:
        sid = (await call(first, "session/create", {"cwd": "/work/big"}))["sessionId"]
        await grow(first, sid, 40, "first")  # ~400 KB: above the size that gets a tree cache
        before = await call(first, "session/buildContext", {"sessionId": sid})
        await call(first, "session/close", {"sessionId": sid})
    finally:
        await first.stop()
    [path] = sessions_root.glob(f"*/*_{sid}.jsonl")
    assert path.stat().st_size > 256 * 1024
    assert len(list((sessions_root / ".index" / "trees").glob("*.msgpack"))) == 1

    second = await started(sessions_root)
    try:
        opened = await call(second, "session/open", {"sessionId": sid})
        assert opened["entryCount"] == 160 and opened["leafId"] == before["leafId"]
        assert await call(second, "session/buildContext", {"sessionId": sid}) == before
        await grow(second, sid, 1, "second")
        grown = await call(second, "session/buildContext", {"sessionId": sid})
        assert (
            grown["messages"][:-4] == before["messages"]
            and grown["messages"][-1]["content"][0]["text"] == "second answer 0"
        )
        second.process.send_signal(signal.SIGKILL)  # no close: the cache still describes the file before this turn
        await second.wait()
    finally:
        await second.stop()

    third = await started(sessions_root)
    try:
        opened = await call(third, "session/open", {"sessionId": sid})
        assert opened["entryCount"] == 164
        assert await call(third, "session/buildContext", {"sessionId": sid}) == grown
        # An earlier leaf, from the tree: the same context the first sidecar built there.
        middle = before["entryIds"][len(before["entryIds"]) // 2]
        again = await call(third, "session/buildContext", {"sessionId": sid, "leafId": middle})
        assert again["messages"] == before["messages"][: before["entryIds"].index(middle) + 1]
    finally:
        await third.stop()
