"""Subscriptions through real sidecar processes: order, cursors, backlog, stopped and dead observers, other processes."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from rpc.harness import RawServer  # tests/rpc (a package beside this one)

from .harness import Client, SocketServer, assistant, user

OBSERVER = Path(__file__).with_name("observer.py")


@pytest.fixture
async def sock_server(tmp_path: Path, sessions_root: Path):
    path = tmp_path / "live.sock"
    server = await SocketServer.start(sessions_root, "--socket", str(path))
    server.path = path  # type: ignore[attr-defined]
    yield server
    assert await server.stop() == 0


async def _controller(path: Path) -> tuple[Client, str]:
    client = await Client.unix(path)
    await client.initialize()
    sid = (await client.call("session/create", {"cwd": "/w"}))["sessionId"]
    await client.call("session/append", {"sessionId": sid, "entries": [user("start"), assistant("ok")]})
    return client, sid


async def _append_bursts(
    client: Client, sid: str, bursts: int, per_burst: int, batch: int = 1, text: str = ""
) -> list[str]:
    """Pipelined appends: each burst sends ``per_burst`` requests at once, then waits for all of them."""
    ids: list[str] = []
    for b in range(bursts):
        answers = await asyncio.gather(
            *(
                client.call(
                    "session/append", {"sessionId": sid, "entries": [user(f"{b}.{i}.{j}{text}") for j in range(batch)]}
                )
                for i in range(per_burst)
            )
        )
        for answer in answers:
            ids += [e["id"] for e in answer["entries"]]
    return ids


async def _collect(client: Client, count: int) -> tuple[list[str], list[dict[str, Any]]]:
    """Entry ids of didAppend notifications until ``count`` arrived (and every notification read)."""
    ids: list[str] = []
    notes: list[dict[str, Any]] = []
    while len(ids) < count:
        note = await client.notification()
        notes.append(note)
        if note["method"] == "session/didAppend":
            ids += [e["id"] for e in note["params"]["entries"]]
    return ids, notes


def _seq(cursor: str) -> int:
    return int(cursor.rsplit(".", 1)[1])


async def test_an_observer_sees_10000_entries_in_bursts_once_and_in_order(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    controller, sid = await _controller(path)
    observers = [await Client.unix(path, framing) for framing in ("jsonl", "lsp")]
    for observer in observers:
        await observer.initialize()
        subscribed = await observer.call("session/subscribe", {"sessionId": sid})
        assert subscribed["entryCount"] == 2
    # 10,000 entries: 50 bursts of 40 pipelined appends of 5 entries each.
    ids = await _append_bursts(controller, sid, bursts=50, per_burst=40, batch=5)
    assert len(ids) == 10_000
    for observer in observers:
        seen, notes = await _collect(observer, 10_000)
        assert seen == ids  # every entry once, in the order written
        cursors = [_seq(n["params"]["cursor"]) for n in notes]
        assert cursors == sorted(cursors) and len(set(cursors)) == len(cursors)
        assert notes[-1]["params"]["leafId"] == ids[-1]
    on_disk = (await controller.call("session/getEntries", {"sessionId": sid}))["entries"]
    assert [e["id"] for e in on_disk][2:] == ids


async def test_reconnect_with_the_cursor_no_gap_no_duplicate(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    controller, sid = await _controller(path)
    observer = await Client.unix(path)
    await observer.initialize()
    await observer.call("session/subscribe", {"sessionId": sid})
    first = await _append_bursts(controller, sid, bursts=3, per_burst=20)
    seen, notes = await _collect(observer, 30)  # it read half, then its connection dies
    cursor = notes[-1]["params"]["cursor"]
    await observer.close()
    rest = await _append_bursts(controller, sid, bursts=2, per_burst=20)  # written while it is away
    again = await Client.unix(path)
    await again.initialize()
    resumed = await again.call("session/subscribe", {"sessionId": sid, "since": cursor})
    assert resumed.get("resync", False) is False
    assert resumed["missed"] == 30 + 40  # the 30 it did not read, the 40 written while away
    more = await _append_bursts(controller, sid, bursts=1, per_burst=10)
    got, _ = await _collect(again, 30 + 40 + 10)
    assert seen + got == first + rest + more
    # A cursor of another process (or from before a restart) cannot be trusted: resync.
    stale = await again.call("session/subscribe", {"sessionId": sid, "since": "0000beef.5"})
    assert stale["resync"] is True and stale.get("missed", 0) == 0
    ahead = await again.request(
        "session/subscribe", {"sessionId": sid, "since": resumed["cursor"].rsplit(".", 1)[0] + ".999999"}
    )
    assert ahead["error"]["code"] == -32602 and ahead["error"]["data"]["field"] == "since"
    bad = await again.request("session/subscribe", {"sessionId": sid, "since": "nonsense"})
    assert bad["error"]["code"] == -32602


async def test_past_the_backlog_a_reconnecting_observer_is_told_to_resync(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    controller, sid = await _controller(path)
    observer = await Client.unix(path)
    await observer.initialize()
    cursor = (await observer.call("session/subscribe", {"sessionId": sid}))["cursor"]
    await observer.close()
    await _append_bursts(controller, sid, bursts=9, per_burst=500)  # 4,500 events: more than the 4,096 kept
    again = await Client.unix(path)
    await again.initialize()
    answer = await again.call("session/subscribe", {"sessionId": sid, "since": cursor})
    assert answer["resync"] is True and answer["entryCount"] == 4502
    last = await controller.call("session/append", {"sessionId": sid, "entries": [user("after")]})
    note = await again.notification()
    assert note["method"] == "session/didAppend" and note["params"]["entries"][0]["id"] == last["entries"][0]["id"]
    assert _seq(note["params"]["cursor"]) == _seq(answer["cursor"]) + 1


async def _observer_process(path: Path, sid: str) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(OBSERVER), str(path), sid, stdout=asyncio.subprocess.PIPE, limit=1 << 26
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 20)
    assert line.startswith(b"subscribed "), line
    return process


async def test_a_stopped_or_killed_observer_does_not_hold_up_the_controller(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    controller, sid = await _controller(path)
    stopped = await _observer_process(path, sid)
    killed = await _observer_process(path, sid)
    watching = await Client.unix(path)
    await watching.initialize()
    await watching.call("session/subscribe", {"sessionId": sid})
    stopped.send_signal(signal.SIGSTOP)
    try:
        # ~45 MB of events: past what the stopped one's socket and our high-water mark hold, and
        # past the backlog's 32 MiB, so it must lose events and be told so.
        pad = " " + "x" * 4000
        ids = await _append_bursts(controller, sid, bursts=3, per_burst=20, batch=1, text=pad)
        killed.kill()
        ids += await _append_bursts(controller, sid, bursts=3, per_burst=20, batch=1, text=pad)
        ids += await _append_bursts(controller, sid, bursts=110, per_burst=20, batch=5, text=pad)
        # The controller was answered throughout (a blocked server would never answer: the test
        # would time out), and a reading observer got everything in order meanwhile.
        seen, _ = await _collect(watching, len(ids))
        assert seen == ids
    finally:
        stopped.send_signal(signal.SIGCONT)
    # Resumed, the stopped observer gets what was buffered, then a resync (it fell past the
    # backlog's bytes): never a gap it is not told of.
    assert stopped.stdout is not None
    got: list[str] = []
    resynced = False
    while len(got) < len(ids) and not resynced:
        note = json.loads(await asyncio.wait_for(stopped.stdout.readline(), 30))
        if note["method"] == "session/didAppend":
            got += [e["id"] for e in note["params"]["entries"]]
        resynced = note["method"] == "session/resync"
    assert got == ids[: len(got)]
    assert resynced and len(got) < len(ids)
    # After the resync it hears of new appends again.
    last = await controller.call("session/append", {"sessionId": sid, "entries": [user("after the resync")]})
    while True:
        note = json.loads(await asyncio.wait_for(stopped.stdout.readline(), 30))
        if note["method"] == "session/didAppend" and note["params"]["entries"][-1]["id"] == last["entries"][0]["id"]:
            break
    stopped.kill()
    await stopped.wait()
    await killed.wait()
    # And the server serves on.
    late = await Client.unix(path)
    assert "result" in await late.initialize()


async def test_event_kinds_over_stdio(sessions_root: Path) -> None:
    """Subscriptions work on a plain stdio sidecar too: label, name, branch, compaction, close."""
    server = await RawServer.start()
    try:
        assert "result" in await server.initialize(sessions_root)
        sid = (await server.request("session/create", {"cwd": "/w"}))["result"]["sessionId"]
        a = (
            await server.request(
                "session/append",
                {
                    "sessionId": sid,
                    "entries": [
                        user("one " * 400),
                        assistant("two " * 2000),
                        user("three " * 400),
                        assistant("four " * 400),
                    ],
                },
            )
        )["result"]
        assert "cursor" in (await server.request("session/subscribe", {"sessionId": sid}))["result"]
        first, leaf = a["entries"][0]["id"], a["leafId"]
        assert "result" in await server.request(
            "session/setLabel", {"sessionId": sid, "entryId": first, "label": "here"}
        )
        assert "result" in await server.request("session/setName", {"sessionId": sid, "name": "Named"})
        assert "result" in await server.request("session/branch", {"sessionId": sid, "entryId": leaf})
        compacted = await server.request(
            "session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10}
        )
        assert "result" in compacted, compacted
        assert (await server.request("session/unsubscribe", {"sessionId": sid}))["result"] == {"unsubscribed": True}
        assert "result" in await server.request("session/append", {"sessionId": sid, "entries": [user("unheard")]})
        assert (await server.request("session/subscribe", {"sessionId": sid}))["result"]["entryCount"] == 8
        assert "result" in await server.request("session/close", {"sessionId": sid})
        await server.request("session/list", {})  # a round trip: every notification sent before its answer is in
        notes = server.notifications
        methods = [n["method"] for n in notes]
        assert methods == [
            "session/didAppend",
            "session/didSetLabel",
            "session/didAppend",
            "session/didSetName",
            "session/didChangeLeaf",
            "session/didAppend",
            "session/didCompact",
            "session/didClose",
        ]
        label, name, branch, compaction, close = (
            notes[1]["params"],
            notes[3]["params"],
            notes[4]["params"],
            notes[6]["params"],
            notes[7]["params"],
        )
        assert (
            label["targetId"] == first
            and label["label"] == "here"
            and label["entryId"] == notes[0]["params"]["entries"][0]["id"]
        )
        assert name["name"] == "Named"
        assert branch["leafId"] == leaf
        assert compaction["entryId"] == compacted["result"]["entryId"] == notes[5]["params"]["entries"][0]["id"]
        assert compaction["firstKeptEntryId"] == compacted["result"]["firstKeptEntryId"]
        assert close["sessionId"] == sid
        cursors = [_seq(n["params"]["cursor"]) for n in notes]
        assert cursors[:7] == list(
            range(1, 8)
        )  # one feed, numbered without a gap (then a new feed after resubscribing)
    finally:
        await server.stop()


async def test_a_read_only_sidecar_notifies_appends_another_process_made(sessions_root: Path, tmp_path: Path) -> None:
    writer = await RawServer.start()
    path = tmp_path / "observer.sock"
    observing = await SocketServer.start(sessions_root, "--socket", str(path))
    try:
        assert "result" in await writer.initialize(sessions_root)
        sid = (await writer.request("session/create", {"cwd": "/w"}))["result"]["sessionId"]
        assert "result" in await writer.request(
            "session/append", {"sessionId": sid, "entries": [user("a"), assistant("b")]}
        )
        observer = await Client.unix(path)
        await observer.initialize()
        # Not open in the observing sidecar: subscribing opens it read-only (the writer holds the lock).
        subscribed = await observer.call("session/subscribe", {"sessionId": sid})
        assert subscribed["entryCount"] == 2
        ids: list[str] = []
        for i in range(40):
            answer = await writer.request(
                "session/append", {"sessionId": sid, "entries": [user(f"u{i}"), assistant(f"a{i}")]}
            )
            ids += [e["id"] for e in answer["result"]["entries"]]
        seen, notes = await _collect(observer, len(ids))
        assert seen == ids
        assert all(n["params"]["external"] is True for n in notes if n["method"] == "session/didAppend")
        # The observer cannot write a session it only reads.
        refused = await observer.request("session/append", {"sessionId": sid, "entries": [user("x")]})
        assert refused["error"]["code"] == -33010 and refused["error"]["data"]["readOnly"] is True
    finally:
        await writer.stop()
        assert await observing.stop() == 0
