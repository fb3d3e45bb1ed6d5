"""Live sessions through the client: attach to a shared sidecar's unix socket, subscribe, follow another client's appends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from session_sidecar_client import RpcError, SidecarClient

from .entries import assistant, user


async def _shared_sidecar(command: list[str], root: Path, socket_path: Path) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *command,
        "serve",
        "--root",
        str(root),
        "--socket",
        str(socket_path),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    while b"ready" not in await asyncio.wait_for(process.stdout.readline(), 20):
        pass
    return process


async def _attach(socket_path: Path, **options: Any) -> SidecarClient:
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    return await SidecarClient.attach(reader, writer, **options)


async def test_an_observer_follows_the_controller_and_resumes_from_its_cursor(
    command: list[str], sessions_root: Path, tmp_path: Path
):
    socket_path = tmp_path / "live.sock"
    server = await _shared_sidecar(command, sessions_root, socket_path)
    try:
        events: list[tuple[str, Any]] = []
        controller = await _attach(socket_path)
        observer = await _attach(
            socket_path,
            on_did_append=lambda p: events.append(("session/didAppend", p)),
            on_notification=lambda m, p: events.append((m, p)),
        )
        created = await controller.create("/work/app")
        sid = created["sessionId"]
        await controller.append(sid, [user("hello"), assistant("hi")])
        subscribed = await observer.subscribe(sid)
        assert subscribed["entryCount"] == 2
        first = await controller.append(sid, [user("one")])
        await controller.set_label(sid, first["entries"][0]["id"], "here")
        await controller.branch(sid, first["entries"][0]["id"])
        for _ in range(200):
            if len(events) >= 4:
                break
            await asyncio.sleep(0.01)
        assert [m for m, _ in events] == [
            "session/didAppend",
            "session/didAppend",
            "session/didSetLabel",
            "session/didChangeLeaf",
        ]
        assert events[0][1]["entries"][0]["id"] == first["entries"][0]["id"]
        cursor = events[-1][1]["cursor"]
        # The observer may not write; it is told so with a typed error code.
        try:
            await observer.append(sid, [user("no")])
        except RpcError as error:
            assert error.code == -33070
        else:
            raise AssertionError("an observer's append was accepted")
        await observer.close()
        # Written while it is away; it comes back with its cursor and gets exactly that.
        missed = await controller.append(sid, [user("two"), assistant("three")])
        again: list[Any] = []
        back = await _attach(socket_path, on_did_append=again.append)
        resumed = await back.subscribe(sid, since=cursor)
        assert resumed["missed"] == 1 and not resumed.get("resync", False)
        for _ in range(200):
            if again:
                break
            await asyncio.sleep(0.01)
        assert [e["id"] for e in again[0]["entries"]] == [e["id"] for e in missed["entries"]]
        taken = await back.take_control(sid)
        assert taken["tookOver"] is True
        await back.append(sid, [user("mine")])
        await back.close()
        await controller.close()
    finally:
        server.terminate()
        assert await server.wait() == 0


async def test_tcp_attach_sends_the_token(command: list[str], sessions_root: Path, tmp_path: Path):
    """``attach(token=...)`` against ``serve --listen``: the right token is served, a wrong or missing one refused."""
    token_file = tmp_path / "token"
    process = await asyncio.create_subprocess_exec(
        *command,
        "serve",
        "--root",
        str(sessions_root),
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        str(token_file),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    port = None
    while True:
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        assert line, "the sidecar exited before it was ready"
        if "listening on" in line:
            port = int(line.rsplit(":", 1)[1])
        if "ready" in line:
            break
    try:
        assert port is not None
        token = token_file.read_text().strip()
        for offered in (None, "a-wrong-token-of-enough-length"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                await SidecarClient.attach(reader, writer, **({"token": offered} if offered else {}))
            except RpcError as error:
                assert error.code == -33071 and "token" in str(error)
            else:
                raise AssertionError(f"initialize with token {offered!r} was accepted")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = await SidecarClient.attach(reader, writer, token=token)
        try:
            created = await client.create("/work/tcp")
            assert created["sessionId"]
        finally:
            await client.close()
    finally:
        process.terminate()
        await process.wait()
