"""Live sessions across hosts (issue 16): two sidecars with roots of their own on one database, as
two hosts would be. A writes through stdio; B serves a socket, and an observer subscribed on B hears
A's changes through PostgreSQL LISTEN/NOTIFY (sidecar/store/postgres/notify.py)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from live.harness import Client, SocketServer
from rpc.harness import RawServer, assistant, user


def result(answer: dict[str, Any]) -> Any:
    assert "result" in answer, answer
    return answer["result"]


async def _hosts(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RawServer, SocketServer, Path]:
    monkeypatch.setenv("SESSION_SIDECAR_DATABASE_URL", pg_url)
    a = await RawServer.start(env=dict(os.environ))
    assert "result" in await a.initialize(tmp_path / "host-a")
    path = tmp_path / "b.sock"
    b = await SocketServer.start(tmp_path / "host-b", "--socket", str(path))
    return a, b, path


async def _collect(client: Client, count: int, until: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """Entry ids of didAppend notifications until ``count`` arrived (and, with ``until``, that method)."""
    ids: list[str] = []
    notes: list[dict[str, Any]] = []
    while len(ids) < count or (until is not None and not any(n["method"] == until for n in notes)):
        note = await client.notification()
        notes.append(note)
        if note["method"] == "session/didAppend":
            ids += [e["id"] for e in note["params"]["entries"]]
    return ids, notes


async def _append(a: RawServer, sid: str, start: int, count: int, per: int = 4) -> list[str]:
    ids: list[str] = []
    for i in range(start, start + count, per):
        answer = result(
            await a.request(
                "session/append",
                {
                    "sessionId": sid,
                    "entries": [
                        # (replies long enough that the compaction below shrinks the context, as it must to be written)
                        user(f"u{j}") if j % 2 == 0 else assistant(f"a{j} " + "done and checked " * 3)
                        for j in range(i, min(i + per, start + count))
                    ],
                },
            )
        )
        ids += [e["id"] for e in answer["entries"]]
    return ids


async def test_an_observer_on_another_host_sees_every_change_once_in_order(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, path = await _hosts(pg_url, tmp_path, monkeypatch)
    try:
        sid = result(await a.request("session/create", {"cwd": "/w"}))["sessionId"]
        first = await _append(a, sid, 0, 4)
        observer = await Client.unix(path)
        await observer.initialize()
        subscribed = await observer.call("session/subscribe", {"sessionId": sid})
        assert subscribed["entryCount"] == 4 and subscribed["leafId"] == first[-1]
        ids = await _append(a, sid, 4, 600)
        seen, notes = await _collect(observer, len(ids))
        assert seen == ids, "entries missing, repeated or out of order"
        assert all(n["params"]["external"] is True for n in notes)
        cursors = [int(n["params"]["cursor"].rsplit(".", 1)[1]) for n in notes]
        assert cursors == list(range(1, len(notes) + 1))

        # A label, a name, a leaf move without an append, a compaction, a close: each arrives, in order.
        result(await a.request("session/setLabel", {"sessionId": sid, "entryId": first[0], "label": "here"}))
        result(await a.request("session/setName", {"sessionId": sid, "name": "Across"}))
        result(await a.request("session/branch", {"sessionId": sid, "entryId": ids[-3]}))
        seen, notes = await _collect(observer, 2, until="session/didChangeLeaf")
        # The label's and the name's entries may come in one didAppend or two (however B caught up).
        methods = [n["method"] for n in notes]
        assert [m for m in methods if m != "session/didAppend"] == [
            "session/didSetLabel",
            "session/didSetName",
            "session/didChangeLeaf",
        ]
        assert methods.index("session/didAppend") == 0 and methods[-1] == "session/didChangeLeaf"
        assert len(seen) == 2
        label = next(n["params"] for n in notes if n["method"] == "session/didSetLabel")
        assert label["targetId"] == first[0] and label["label"] == "here"
        assert next(n["params"] for n in notes if n["method"] == "session/didSetName")["name"] == "Across"
        assert notes[-1]["params"]["leafId"] == ids[-3]
        compacted = result(
            await a.request("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10})
        )
        seen, notes = await _collect(observer, 1, until="session/didCompact")
        assert seen == [compacted["entryId"]]
        assert notes[0]["params"]["entries"][0]["parentId"] == ids[-3], "the compaction hangs off the moved leaf"
        assert notes[-1]["params"]["firstKeptEntryId"] == compacted["firstKeptEntryId"]
        # B's copy is the same tree: its context ends where A's does.
        a_context = result(await a.request("session/buildContext", {"sessionId": sid}))
        b_context = await observer.call("session/buildContext", {"sessionId": sid})
        assert b_context["messages"] == a_context["messages"]
        result(await a.request("session/close", {"sessionId": sid}))
        note = await observer.notification()
        assert note["method"] == "session/didClose" and note["params"]["sessionId"] == sid
        await observer.close()
    finally:
        await a.stop()
        assert await b.stop() == 0


def _listen_backends(pg_url: str) -> list[int]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'session-sidecar-listen' AND datname = current_database()"
        ).fetchall()
    return [r[0] for r in rows]


async def _wait_for(check: Any, timeout: float = 20.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = check()
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_a_listener_cut_off_mid_stream_catches_up_with_no_gap_and_no_duplicate(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, path = await _hosts(pg_url, tmp_path, monkeypatch)
    try:
        sid = result(await a.request("session/create", {"cwd": "/w"}))["sessionId"]
        await _append(a, sid, 0, 2)
        observer = await Client.unix(path)
        await observer.initialize()
        await observer.call("session/subscribe", {"sessionId": sid})
        before = await _wait_for(lambda: _listen_backends(pg_url))
        assert len(before) == 1

        async def cut() -> None:
            await asyncio.sleep(0.3)
            with psycopg.connect(pg_url, autocommit=True) as conn:
                assert conn.execute("SELECT pg_terminate_backend(%s)", (before[0],)).fetchone()[0] is True

        writing = asyncio.ensure_future(_append(a, sid, 2, 800, per=2))
        await cut()
        ids = await writing
        seen, _notes = await _collect(observer, len(ids))
        after = await _wait_for(lambda: _listen_backends(pg_url))
        assert after and after != before, "the listener did not connect again"
        assert seen == ids, f"{len(seen)} seen for {len(ids)} written (gap or duplicate)"
        # The new connection hears appends as the old one did.
        more = await _append(a, sid, 802, 4)
        assert (await _collect(observer, len(more)))[0] == more

        # A stopped listener host costs the writer nothing: A goes on while B is stopped.
        b.process.send_signal(signal.SIGSTOP)
        try:
            later = await asyncio.wait_for(_append(a, sid, 806, 100), 20)
        finally:
            b.process.send_signal(signal.SIGCONT)
        assert (await _collect(observer, len(later)))[0] == later
        await observer.close()
    finally:
        await a.stop()
        assert await b.stop() == 0
