"""Socket mode through a real sidecar process: permissions, tokens, garbage, roles."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from .harness import Client, SocketServer, assistant, socket_mode, user


@pytest.fixture
async def sock_server(tmp_path: Path, sessions_root: Path):
    path = tmp_path / "live.sock"
    server = await SocketServer.start(sessions_root, "--socket", str(path))
    server.path = path  # type: ignore[attr-defined]
    yield server
    assert await server.stop() == 0
    assert not path.exists()  # removed on SIGTERM


async def test_unix_socket_is_0600_and_serves_two_framings(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    assert socket_mode(path) == 0o600
    lsp, jsonl = await Client.unix(path, "lsp"), await Client.unix(path, "jsonl")
    for client in (lsp, jsonl):
        result = (await client.initialize())["result"]
        assert "session/subscribe" in result["capabilities"]["methods"]
    created = await lsp.call("session/create", {"cwd": "/w"})
    await lsp.call("session/append", {"sessionId": created["sessionId"], "entries": [user("hi"), assistant("yo")]})
    # The other client sees the same service: the session is listed for it at once.
    listed = await jsonl.call("session/list", {"all": True})
    info = next(s for s in listed["sessions"] if s["sessionId"] == created["sessionId"])
    assert info["updatedAt"] == info["modified"]  # ACP's SessionInfo field


async def test_a_second_server_on_the_same_socket_is_refused(sock_server: SocketServer, sessions_root: Path) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    process = await asyncio.create_subprocess_exec(
        *SocketServer.__init__.__globals__["SERVER"],
        "--root",
        str(sessions_root),
        "--socket",
        str(path),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _out, err = await process.communicate()
    assert process.returncode != 0 and b"already serves" in err
    client = await Client.unix(path)  # the first one still serves
    assert "result" in await client.initialize()


async def test_garbage_on_the_shared_socket_disturbs_nobody(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    good = await Client.unix(path)
    await good.initialize()
    created = await good.call("session/create", {"cwd": "/w"})
    sid = created["sessionId"]
    observer = await Client.unix(path)
    await observer.initialize()
    await observer.call("session/subscribe", {"sessionId": sid})

    bad_lsp = await Client.unix(path, "lsp")
    bad_lsp.writer.write(b"Content-Length: nope\r\n\r\n{}" + b"Content-Length: 5\r\n\r\n{{{{{" + os.urandom(2000))
    bad_json = await Client.unix(path, "jsonl")
    bad_json.writer.write(b"{not json\n[1,2]\n" + b'{"jsonrpc":"2.0","id":1,"method":"session/append","params":{}}\n')
    raw = await asyncio.open_unix_connection(str(path))
    raw[1].write(b"\x00\xff" * 5000)  # neither framing
    raw[1].close()

    ids = []
    for i in range(50):
        result = await good.call("session/append", {"sessionId": sid, "entries": [user(f"m{i}")]})
        ids.append(result["entries"][0]["id"])
    seen = []
    while len(seen) < 50:
        note = await observer.notification()
        assert note["method"] == "session/didAppend"
        seen += [e["id"] for e in note["params"]["entries"]]
    assert seen == ids
    # The garbage got its answers, on its own connection only.
    answer = await bad_json.notification()
    assert answer["error"]["code"] == -32700
    answer = await bad_json.notification()
    assert answer["error"]["code"] == -32600
    answer = await bad_json.notification()
    assert answer["error"]["code"] == -32002  # not initialized: nothing was appended
    assert (await bad_lsp.notification())["error"]["code"] == -32700
    entries = await good.call("session/getEntries", {"sessionId": sid})
    assert [e["id"] for e in entries["entries"]] == ids


async def test_tcp_needs_the_token(tmp_path: Path, sessions_root: Path) -> None:
    token_file = tmp_path / "token"
    server = await SocketServer.start(sessions_root, "--listen", "127.0.0.1:0", "--token-file", str(token_file))
    try:
        assert server.port
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        token = token_file.read_text().strip()
        for offered in (None, "wrong-token-of-enough-length", token[:-1]):
            intruder = await Client.tcp(server.port)
            before = await intruder.request("session/list", {"all": True})
            assert before["error"]["code"] == -32002
            answer = await intruder.initialize(**({"token": offered} if offered else {}))
            assert answer["error"]["code"] == -33071
            assert answer["error"]["data"]["kind"] == "unauthorized"
            await asyncio.wait_for(intruder.closed.wait(), 10)  # hung up on
        client = await Client.tcp(server.port, "lsp")
        assert "result" in await client.initialize(token=token)
        assert "sessions" in await client.call("session/list", {"all": True})
        # A shared server's root and settings are its own.
        other = await Client.tcp(server.port)
        refused = await other.initialize(token=token, sessionRoot=str(tmp_path))
        assert refused["error"]["code"] == -33072
    finally:
        assert await server.stop() == 0


async def test_roles_one_controller_observers_refused_take_control_tells_the_former(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    first, second = await Client.unix(path), await Client.unix(path)
    await first.initialize()
    await second.initialize()
    sid = (await first.call("session/create", {"cwd": "/w"}))["sessionId"]
    appended = await first.call("session/append", {"sessionId": sid, "entries": [user("a"), assistant("b")]})
    # An observer reads and subscribes, but may not write.
    assert (await second.call("session/getEntries", {"sessionId": sid}))["entries"]
    sub = await second.call("session/subscribe", {"sessionId": sid})
    assert sub["entryCount"] == 2 and sub.get("controller", False) is False
    for method, params in (
        ("session/append", {"entries": [user("x")]}),
        ("session/setLabel", {"entryId": appended["leafId"], "label": "no"}),
        ("session/branch", {"entryId": appended["entries"][0]["id"]}),
        ("session/setName", {"name": "no"}),
    ):
        refused = await second.request(method, {"sessionId": sid, **params})
        assert refused["error"]["code"] == -33070, (method, refused)
        assert refused["error"]["data"] == {"kind": "notController", "sessionId": sid}
    taken = await second.call("session/takeControl", {"sessionId": sid})
    assert taken == {"sessionId": sid, "tookOver": True}
    told = await first.notification()
    assert told == {"jsonrpc": "2.0", "method": "session/didLoseControl", "params": {"sessionId": sid}}
    assert (await first.request("session/append", {"sessionId": sid, "entries": [user("late")]}))["error"][
        "code"
    ] == -33070
    await second.call("session/append", {"sessionId": sid, "entries": [user("mine now")]})
    # The controller leaves: the session has none, and the first writer claims it again.
    await second.close()
    await asyncio.sleep(0.2)
    await first.call("session/append", {"sessionId": sid, "entries": [user("back")]})
    entries = (await first.call("session/getEntries", {"sessionId": sid}))["entries"]
    texts = [e["message"]["content"][0]["text"] for e in entries]
    assert texts == ["a", "b", "mine now", "back"]


async def test_shutdown_of_one_client_leaves_the_sessions_to_the_others(sock_server: SocketServer) -> None:
    path = sock_server.path  # type: ignore[attr-defined]
    leaving, staying = await Client.unix(path), await Client.unix(path)
    await leaving.initialize()
    await staying.initialize()
    sid = (await leaving.call("session/create", {"cwd": "/w"}))["sessionId"]
    await leaving.call("session/append", {"sessionId": sid, "entries": [user("a"), assistant("b")]})
    assert (await leaving.request("shutdown"))["result"] is None
    leaving.send({"jsonrpc": "2.0", "method": "exit"})
    await asyncio.wait_for(leaving.closed.wait(), 10)
    # Still open here (no file read again), writable by whoever claims it now.
    await staying.call("session/append", {"sessionId": sid, "entries": [user("c")]})
    entries = (await staying.call("session/getEntries", {"sessionId": sid}))["entries"]
    assert len(entries) == 3
    path_on_disk = Path((await staying.call("session/list", {"all": True}))["sessions"][0]["path"])
    assert len(path_on_disk.read_text().splitlines()) == 4  # header + 3
    assert json.loads(path_on_disk.read_text().splitlines()[-1])["id"] == entries[-1]["id"]


async def test_keep_serving_after_the_stdio_client_leaves(tmp_path: Path, sessions_root: Path) -> None:
    """initialize's keepServing: socket clients attach to the stdio client's sidecar, and keep it after it leaves."""
    from rpc.harness import RawServer  # tests/rpc

    path = tmp_path / "kept.sock"
    spawned = await RawServer.start()
    try:
        answer = await spawned.initialize(sessions_root, keepServing=str(path))
        assert "result" in answer, answer
        sid = (await spawned.request("session/create", {"cwd": "/w"}))["result"]["sessionId"]
        assert "result" in await spawned.request(
            "session/append", {"sessionId": sid, "entries": [user("a"), assistant("b")]}
        )
        for _ in range(100):
            if path.exists():
                break
            await asyncio.sleep(0.02)
        assert socket_mode(path) == 0o600
        attached = await Client.unix(path)
        assert "result" in await attached.initialize(sessionRoot=str(sessions_root))  # the same root is fine
        await attached.call("session/subscribe", {"sessionId": sid})
        # The spawning client controls the session (it wrote first): the attached one observes.
        refused = await attached.request("session/append", {"sessionId": sid, "entries": [user("x")]})
        assert refused["error"]["code"] == -33070
        appended = await spawned.request("session/append", {"sessionId": sid, "entries": [user("c")]})
        note = await attached.notification()
        assert note["method"] == "session/didAppend"
        assert note["params"]["entries"][0]["id"] == appended["result"]["entries"][0]["id"]
        # A second sidecar asking for the same socket is told it is served.
        other = await RawServer.start()
        try:
            taken = await other.initialize(sessions_root, keepServing=str(path))
            assert taken["error"]["code"] == -33073 and taken["error"]["data"]["kind"] == "socketInUse"
        finally:
            await other.stop()
        # The spawning client leaves (shutdown, exit): the process serves on.
        assert (await spawned.request("shutdown"))["result"] is None
        spawned.send({"jsonrpc": "2.0", "method": "exit"})
        await spawned.close_stdin()
        await asyncio.sleep(0.3)
        assert spawned.process.returncode is None
        # The session is still open and now nobody controls it: the attached client may write.
        await attached.call("session/append", {"sessionId": sid, "entries": [user("d")]})
        late = await Client.unix(path)
        assert "result" in await late.initialize()
        entries = (await late.call("session/getEntries", {"sessionId": sid}))["entries"]
        assert [e["message"]["content"][0]["text"] for e in entries] == ["a", "b", "c", "d"]
        spawned.process.terminate()
        assert await spawned.wait() == 0
        assert not path.exists()
        # Closed cleanly: the file holds every entry, and another sidecar can write it now.
        lines = next(sessions_root.rglob(f"*{sid}.jsonl")).read_text().splitlines()
        assert len(lines) == 5
    finally:
        await spawned.stop()
