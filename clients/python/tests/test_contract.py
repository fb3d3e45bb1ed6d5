"""No call is left waiting, and the documented errors are what comes back (issue 37, items 2 and 3).

Against a real sidecar, except the id-null rule, which is also checked against
a scripted peer over in-memory streams, where which frame went unread is known.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import ConnectionClosed, PayloadTooLargeError, RpcError, SidecarClient, SidecarServer
from session_sidecar_client.client import MAX_MESSAGE_BYTES, EncodedJson

from .entries import assistant, tool_call, user
from .paths import sidecar_command


def cut_emoji() -> str:
    """What a JavaScript agent's "😀".slice(0, 1) is, as a Python str: the lone surrogate \\ud83d."""
    return "tool output cut here: \ud83d"


async def test_a_lone_surrogate_goes_out_as_the_escape_javascript_writes_and_comes_back(client: SidecarClient):
    text = cut_emoji()
    with pytest.raises(UnicodeEncodeError):
        text.encode()  # no UTF-8 for it: the client must escape it
    sent: list[bytes] = []
    client.trace = lambda direction, message: None
    original = client.writer.write
    client.writer.write = lambda data: (sent.append(bytes(data)), original(data))[1]  # type: ignore[method-assign]
    created = await client.create("/work/cut")
    await client.append(created["sessionId"], [user(text)])
    assert any(b'\\ud83d"' in frame for frame in sent), "written as JSON.stringify writes it"
    context = await client.build_context(created["sessionId"], format="llm")
    assert context["messages"][0]["content"][0]["text"] == text


async def test_a_request_over_the_frame_limit_fails_before_sending(client: SidecarClient):
    created = await client.create("/work/big")
    started = time.monotonic()
    with pytest.raises(PayloadTooLargeError) as caught:
        await client.append(created["sessionId"], [user("x" * (MAX_MESSAGE_BYTES + 1024))])
    assert time.monotonic() - started < 5
    assert caught.value.code == -33011 and caught.value.kind == "payloadTooLarge"
    assert caught.value.data["bytes"] > MAX_MESSAGE_BYTES
    assert (await client.get_entries(created["sessionId"]))["entries"] == []  # nothing was sent


async def test_what_json_cannot_encode_fails_as_the_encoders_error(client: SidecarClient):
    created = await client.create("/work/unencodable")
    with pytest.raises(TypeError, match="not JSON serializable"):
        await client.append(created["sessionId"], [assistant("", tool_call("c1", "count", n={1, 2}))])
    with pytest.raises(ValueError, match="JSON compliant"):
        await client.append(created["sessionId"], [assistant("", tool_call("c1", "count", n=float("nan")))])
    assert not client.closed
    await client.append(created["sessionId"], [user("still fine")])


async def test_nesting_past_what_json_encodes_fails_in_the_client(client: SidecarClient):
    # Past ~1000 levels neither Python's json nor the sidecar's msgspec reads it: the
    # client's encoder says so first, and nothing is sent.
    created = await client.create("/work/deep")
    deep: Any = "bottom"
    for _ in range(3000):
        deep = [deep]
    with pytest.raises(RecursionError):
        async with asyncio.timeout(1.0):
            await client.append(created["sessionId"], [{"type": "custom", "customType": "deep", "data": deep}])
    assert (await client.get_entries(created["sessionId"]))["entries"] == []


async def test_a_deadline_settles_a_call_the_sidecar_never_answers(client: SidecarClient):
    created = await client.create("/work/stopped")
    assert client.process is not None
    client.process.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await client.get_entries(created["sessionId"])
        assert time.monotonic() - started < 0.6
    finally:
        client.process.send_signal(signal.SIGCONT)
    assert (await client.get_entries(created["sessionId"]))["entries"] == []  # the late answer was dropped


# -- the id-null rule, against a scripted peer ---------------------------------------


class Peer:
    """Reads the client's frames from a pipe and writes answers into its reader."""

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader()
        self.frames: list[dict[str, Any]] = []
        self._buffer = b""
        self._arrived = asyncio.Event()
        self._closing = False

    # the Writer protocol the client writes to
    def write(self, data: bytes) -> None:
        self._buffer += data
        while (end := self._buffer.find(b"\r\n\r\n")) >= 0:
            length = int(self._buffer[:end].split(b":")[1])
            if len(self._buffer) < end + 4 + length:
                break
            self.frames.append(json.loads(self._buffer[end + 4 : end + 4 + length]))
            self._buffer = self._buffer[end + 4 + length :]
            self._arrived.set()

    async def drain(self) -> None: ...
    def close(self) -> None:
        self._closing = True
        self.reader.feed_eof()

    def is_closing(self) -> bool:
        return self._closing

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.reader.feed_data(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    async def frame(self, n: int) -> dict[str, Any]:
        while len(self.frames) <= n:
            self._arrived.clear()
            await self._arrived.wait()
        return self.frames[n]


PARSE_ERROR = {
    "id": None,
    "error": {"code": -32700, "message": "could not read the frame", "data": {"kind": "parseError"}},
}


async def scripted(**options: Any) -> tuple[SidecarClient, Peer]:
    peer = Peer()
    opening = asyncio.ensure_future(SidecarClient.attach(peer.reader, peer, **options))
    init = await peer.frame(0)
    peer.send(
        {
            "id": init["id"],
            "result": {
                "protocolVersion": "1.0",
                "serverInfo": {"name": "peer"},
                "capabilities": {"methods": []},
                "sessionRoot": "/r",
                "settings": {},
            },
        }
    )
    return await opening, peer


async def test_id_null_settles_the_one_call_in_flight():
    client, peer = await scripted()
    call = asyncio.ensure_future(client.list())
    await peer.frame(2)
    peer.send(PARSE_ERROR)
    with pytest.raises(RpcError) as caught:
        await asyncio.wait_for(call, 1)
    assert caught.value.code == -32700
    await client.close(timeout=0.1)


async def test_id_null_with_several_in_flight_settles_the_one_holding_a_lone_surrogate():
    client, peer = await scripted()
    good = asyncio.ensure_future(client.list())
    cut = asyncio.ensure_future(client.set_name("s", cut_emoji()))
    good_frame = await peer.frame(2)
    await peer.frame(3)
    peer.send(PARSE_ERROR)
    with pytest.raises(RpcError):
        await asyncio.wait_for(cut, 1)
    peer.send({"id": good_frame["id"], "result": {"sessions": []}})
    assert await asyncio.wait_for(good, 1) == {"sessions": []}
    await client.close(timeout=0.1)


async def test_id_null_with_several_in_flight_and_none_suspect_is_reported():
    reported: list[RpcError] = []
    client, peer = await scripted(on_protocol_error=reported.append)
    a = asyncio.ensure_future(client.list())
    b = asyncio.ensure_future(client.list(cwd="/b"))
    await peer.frame(3)
    peer.send(PARSE_ERROR)
    await asyncio.sleep(0.05)
    assert [e.code for e in reported] == [-32700] and not a.done() and not b.done()
    for n in (2, 3):
        peer.send({"id": peer.frames[n]["id"], "result": {"sessions": []}})
    assert await asyncio.wait_for(asyncio.gather(a, b), 1) == [{"sessions": []}, {"sessions": []}]
    await client.close(timeout=0.1)


# -- the error contract ------------------------------------------------------------------


async def test_after_close_every_call_and_notify_raises_connection_closed(command: list[str], sessions_root: Path):
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    created = await client.create("/work/closed")
    assert await client.close() == 0
    calls = [
        client.create("/work/x"),
        client.append(created["sessionId"], [user("late")]),
        client.build_context(created["sessionId"], format="llm"),
        client.list(),
        client.compact(created["sessionId"]),
        client.request("session/getTree", {"sessionId": created["sessionId"]}),
    ]
    for call in calls:
        with pytest.raises(ConnectionClosed):
            await call
    with pytest.raises(ConnectionClosed):
        client.notify("$/cancelRequest", {"id": 1})


async def test_a_sidecar_killed_by_sigkill_is_reported_by_the_signals_name(command: list[str], sessions_root: Path):
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    assert client.process is not None
    created = await client.create("/work/killed")
    client.process.send_signal(signal.SIGSTOP)  # the call below stays in flight until the kill
    call = asyncio.ensure_future(client.get_entries(created["sessionId"]))
    await asyncio.sleep(0.1)
    client.process.kill()
    with pytest.raises(ConnectionClosed) as caught:
        await asyncio.wait_for(call, 5)
    assert caught.value.signal == "SIGKILL"
    assert "killed by SIGKILL" in str(caught.value) and "-9" not in str(caught.value)
    with pytest.raises(ConnectionClosed, match="killed by SIGKILL"):
        await client.list()
    with pytest.raises(ConnectionClosed, match="killed by SIGKILL"):
        client.notify("exit")
    await client.close()


# -- a socket server ---------------------------------------------------------------------


async def test_a_socket_server_started_and_shared_by_two_clients(tmp_path: Path):
    socket = tmp_path / "sidecar.sock"
    server = await SidecarServer.start(socket, command=sidecar_command(), root=tmp_path / "sessions")
    try:
        async with SidecarClient.connect_socket(socket) as agent, SidecarClient.connect_socket(socket) as observer:
            created = await agent.create("/work/team")
            await agent.append(created["sessionId"], [user("hi"), assistant("hello")])
            page = await observer.list(all=True)
            assert [s["sessionId"] for s in page["sessions"]] == [created["sessionId"]]
    finally:
        assert await server.stop() == 0
    with pytest.raises(ConnectionClosed):
        await SidecarClient.connect_socket(socket, wait=0.1)


async def test_a_socket_server_that_cannot_start_says_why(tmp_path: Path):
    with pytest.raises(ConnectionClosed, match="before it was ready"):
        await SidecarServer.start(tmp_path / "no" / "such" / "s.sock", command=sidecar_command(), root=tmp_path)


async def test_each_subscription_event_comes_to_its_typed_callback(tmp_path: Path):
    socket = tmp_path / "sidecar.sock"
    labels: asyncio.Queue[Any] = asyncio.Queue()
    names: asyncio.Queue[Any] = asyncio.Queue()
    others: list[str] = []
    async with await SidecarServer.start(socket, command=sidecar_command(), root=tmp_path / "sessions"):
        async with (
            SidecarClient.connect_socket(socket) as agent,
            SidecarClient.connect_socket(
                socket,
                on_did_set_label=labels.put_nowait,
                on_did_set_name=names.put_nowait,
                on_notification=lambda method, params: others.append(method),
            ) as observer,
        ):
            created = await agent.create("/work/watched")
            sid = created["sessionId"]
            appended = await agent.append(sid, [user("hi"), assistant("hello")])
            await observer.subscribe(sid)
            await agent.set_label(sid, appended["entries"][0]["id"], "start")
            await agent.set_name(sid, "watched")
            label = await asyncio.wait_for(labels.get(), 5)
            name = await asyncio.wait_for(names.get(), 5)
    assert label["targetId"] == appended["entries"][0]["id"] and label["label"] == "start"
    assert name["name"] == "watched"
    assert "session/didSetLabel" not in others and "session/didSetName" not in others


async def test_an_encoded_params_value_goes_out_as_its_bytes_and_is_traced_decoded(client: SidecarClient):
    """EncodedJson: a params value already encoded is spliced into the frame as it is (the OpenAI Agents
    adapter sends a large batch so); the sidecar reads what the value decoded would have sent, and a
    trace sees it decoded."""
    created = await client.create("/work/encoded")
    sid = created["sessionId"]
    entries = [user('é 漢字 🙂, \u2028 and a "quote"'), assistant("", tool_call("c1", "count", n=1.5, deep=[{}]))]
    sent: list[Any] = []
    client.trace = lambda direction, message: sent.append(message) if direction == "send" else None
    encoded = EncodedJson(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode())
    result = await client.request("session/append", {"sessionId": sid, "entries": encoded})
    client.trace = None
    assert len(result["entries"]) == 2 and result["leafId"] == result["entries"][-1]["id"]
    written = (await client.get_entries(sid))["entries"]
    assert [entry["message"] for entry in written] == [entry["message"] for entry in entries]
    assert sent[0]["params"] == {"sessionId": sid, "entries": entries}  # (decoded for the trace)
    # The frame is the one json makes of the decoded value, byte for byte.
    message = {"jsonrpc": "2.0", "id": 7, "method": "session/append", "params": {"sessionId": sid, "entries": encoded}}
    plain = {**message, "params": {"sessionId": sid, "entries": entries}}
    assert client._encode(message) == client._encode(plain)


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
async def test_the_pipe_to_a_spawned_sidecar_takes_a_large_append_in_one_write(client: SidecarClient):
    """The client widens the pipe to the sidecar's stdin (1 MiB, the most an unprivileged process may ask):
    a 1,000-entry append (~250 KB) goes out in one write instead of 64 KiB pieces."""
    fd = client.writer.transport.get_extra_info("pipe").fileno()  # type: ignore[attr-defined]  # (a spawned client's writer is a StreamWriter)
    allowed = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    assert fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) == min(1 << 20, allowed)
    created = await client.create("/work/wide")
    batch = [user(f"entry {n} " + "x" * 250) for n in range(1000)]
    result = await client.append(created["sessionId"], batch)
    assert len(result["entries"]) == 1000
    assert len((await client.get_entries(created["sessionId"]))["entries"]) == 1000
