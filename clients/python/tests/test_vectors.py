"""Every transcript in protocol/vectors/ replayed against a real sidecar through this client, in both framings.

Two replays per vector:

* through the API: each request goes through the typed method of its
  protocol method (``client.create(...)``, ``client.append(...)``), or through
  ``client.request`` when its params do not fit the typed signature (the
  vectors' deliberately wrong params); the answer the client hands back (a
  result, or the ``RpcError`` it raised) is matched as the response.
  ``initialize`` is the client's own, which also sends ``initialized``.
  Malformed input goes through ``send_raw``; the server's answers to it (with
  the id it read from the bytes, else null) arrive through ``on_protocol_error``.
* on the wire: the vector's messages exactly as written, through the client's
  framing (``send_message``), and every message the client's reader decodes
  (``trace``) matched in order.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import PYTHON_METHODS, RpcError, SidecarClient

from .paths import VECTORS_DIR
from .vectors import VectorMismatch, expect, fill

VECTORS = sorted(VECTORS_DIR.glob("*.json"))
PROTOCOL_TO_PYTHON = {method: name for name, method in PYTHON_METHODS.items()}
TIMEOUT = 10.0


def snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def test_the_vectors_are_there():
    assert {path.stem for path in VECTORS} >= {"errors", "lifecycle", "session-basics"}


async def call_through_api(client: SidecarClient, message: dict[str, Any], used: list[str]) -> dict[str, Any]:
    """One request through the typed method if its params fit it, else ``request``; the answer as a response message."""
    method, params = message["method"], message.get("params")
    name = PROTOCOL_TO_PYTHON.get(method)
    call = None
    if name is not None:
        bound = getattr(client, name)
        accepted = inspect.signature(bound).parameters
        kwargs = {snake(key): value for key, value in (params or {}).items()}
        if set(kwargs) <= set(accepted):
            call = bound(**kwargs)
            used.append(name)
    if call is None:
        call = client.request(method, params)
        used.append(f"request({method})")
    response: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    try:
        response["result"] = await asyncio.wait_for(call, TIMEOUT)
    except RpcError as error:
        response["error"] = error.to_dict()
    return response


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
@pytest.mark.parametrize("vector", VECTORS, ids=lambda path: path.stem)
async def test_vector_through_the_api(vector: Path, framing: str, command: list[str], tmp_path: Path):
    steps = json.loads(vector.read_text(encoding="utf-8"))
    names: dict[str, Any] = {"root": str(tmp_path / "sessions")}
    id_null_errors: asyncio.Queue[RpcError] = asyncio.Queue()
    used: list[str] = []
    # Notifications reach the API's callbacks, not a stream of messages: each expected one is taken
    # from here in turn (their order against the answers is checked by the raw replay, tests/rpc).
    notes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def note(method: str) -> Any:
        return lambda params: notes.put_nowait({"jsonrpc": "2.0", "method": method, "params": params})

    client = await SidecarClient.spawn(
        command=command,
        framing=framing,
        initialize=False,
        on_protocol_error=id_null_errors.put_nowait,
        on_did_append=note("session/didAppend"),
        on_did_compact=note("session/didCompact"),
        on_did_reload=note("session/didReload"),
        on_notification=lambda method, params: notes.put_nowait({"jsonrpc": "2.0", "method": method, "params": params}),
    )
    try:
        for number, step in enumerate(steps):
            if step.get("framing", framing) != framing:
                continue
            received: list[Any] = []
            if "sendRaw" in step:
                client.send_raw(step["sendRaw"].encode())
                for _ in step.get("expect", []):
                    error = await asyncio.wait_for(id_null_errors.get(), TIMEOUT)
                    received.append({"jsonrpc": "2.0", "id": error.request_id, "error": error.to_dict()})
            elif "id" in step["send"]:
                answer = await call_through_api(client, fill(step["send"], names), used)
                for expected in step.get("expect", []):
                    if "method" in expected:
                        received.append(await asyncio.wait_for(notes.get(), TIMEOUT))
                    else:
                        received.append(answer)
            else:
                method = step["send"]["method"]
                if method == "initialized":  # the client sent it right after initialize answered
                    assert client.state == "initialized"
                elif method == "exit":
                    client.exit()
                else:
                    client.notify(method, fill(step["send"].get("params"), names))
            try:
                expect(step.get("expect", []), received, names)
            except VectorMismatch as error:
                raise AssertionError(f"{vector.name} step {number} ({step.get('comment', '')}): {error}") from None
        if steps[-1].get("send", {}).get("method") == "exit":
            assert await asyncio.wait_for(client.wait(), TIMEOUT) == 0
        assert id_null_errors.empty()
        typed = [name for name in used if not name.startswith("request(")]
        assert typed and "initialize" in typed, used
    finally:
        await client.close()


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
@pytest.mark.parametrize("vector", VECTORS, ids=lambda path: path.stem)
async def test_vector_on_the_wire(vector: Path, framing: str, command: list[str], tmp_path: Path):
    steps = json.loads(vector.read_text(encoding="utf-8"))
    names: dict[str, Any] = {"root": str(tmp_path / "sessions")}
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    sent: list[Any] = []

    def trace(direction: str, message: Any) -> None:
        (inbox.put_nowait if direction == "receive" else sent.append)(message)

    client = await SidecarClient.spawn(command=command, framing=framing, initialize=False, trace=trace)
    try:
        for number, step in enumerate(steps):
            if step.get("framing", framing) != framing:
                continue
            if "sendRaw" in step:
                client.send_raw(step["sendRaw"].encode())
            else:
                client.send_message(fill(step["send"], names))
            for index, expected in enumerate(step.get("expect", [])):
                actual = await asyncio.wait_for(inbox.get(), TIMEOUT)
                try:
                    expect(expected, actual, names)
                except VectorMismatch as error:
                    raise AssertionError(f"{vector.name} step {number} message {index}: {error}") from None
        if steps[-1].get("send", {}).get("method") == "exit":
            assert await asyncio.wait_for(client.wait(), TIMEOUT) == 0
        assert inbox.empty()
        assert len(sent) == sum(1 for s in steps if "send" in s and s.get("framing", framing) == framing)
    finally:
        await client.close()


def test_the_matcher_rejects_what_it_should():
    names: dict[str, Any] = {"root": "/r"}
    expect(
        {"a": "<capture:x>", "b": "${x}", "p": "${root}/<*>_s.jsonl"}, {"a": 5, "b": 5, "p": "/r/2025_s.jsonl"}, names
    )
    assert names["x"] == 5
    for expected, actual in [
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"a": 1, "b": 2}, {"a": 1}),
        ("<integer>", True),
        ("<integer>", 1.0),
        ("<string>", None),
        ("<timestamp>", "2025-01-01 10:00:00"),
        ("${root}/<*>_s.jsonl", "/other/x_s.jsonl"),
        ([1, 2], [1]),
        (1, 1.0),
        (False, 0),
        (None, "null"),
    ]:
        with pytest.raises(VectorMismatch):
            expect(expected, actual, dict(names))
