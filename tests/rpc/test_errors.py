"""Bad input of every kind: each request with an id gets one answer, the server goes on, no file changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_mode import ON_POSTGRES, stored_state

from .harness import RawServer, assistant, frame, snapshot, user


async def seed(raw: RawServer) -> str:
    created = (await raw.request("session/create", {"cwd": "/w", "sessionId": "keep"}))["result"]
    await raw.request("session/append", {"sessionId": "keep", "entries": [user("hi"), assistant("hello")]})
    return created["path"]


async def still_serving(raw: RawServer) -> None:
    answer = await raw.request("session/getTree", {"sessionId": "keep"})
    assert len(answer["result"]["nodes"]) == 2


DEEP = (
    b'{"jsonrpc":"2.0","id":5,"method":"session/append","params":{"sessionId":"keep","entries":[{"type":"custom",'
    b'"customType":"x","data":' + b"[" * 5000 + b"]" * 5000 + b"}]}}"
)


def _lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


BAD_FRAMES = [
    pytest.param(b"Content-Length: 9\r\n\r\n{invalid}", "invalid JSON", None, id="invalid-json"),
    pytest.param(b"Content-Length: abc\r\n\r\n", "Content-Length", None, id="non-numeric-length"),
    pytest.param(b"Content-Length: -5\r\n\r\n", "Content-Length", None, id="negative-length"),
    pytest.param(b"Content-Type: application/json\r\n\r\n", "without Content-Length", None, id="missing-length"),
    pytest.param(b"hello there\r\n\r\n", "header line", None, id="garbage-header"),
    pytest.param(b'Content-Length: 20\r\n\r\n{"jsonrpc":"2.0","id"', "invalid JSON", None, id="truncated-body"),
    # Past msgspec's depth a RecursionError reached the frame loop: the request went unanswered.
    pytest.param(_lsp(DEEP), "nested too deep", 5, id="nested-too-deep"),
    # Invalid UTF-8 in a string raised UnicodeDecodeError out of the frame loop: no answer at all.
    pytest.param(
        _lsp(b'{"jsonrpc":"2.0","id":"u1","method":"session/list","params":{"query":"caf\xe9"}}'),
        "UTF-8",
        "u1",
        id="invalid-utf8",
    ),
    pytest.param(
        _lsp(b'{"jsonrpc":"2.0","method":"session/list","params":{"query":"\xff\xfe","id":"inner"},"id":31}'),
        "UTF-8",
        31,
        id="invalid-utf8-id-after-params",
    ),
    pytest.param(
        _lsp(b'{"jsonrpc":"2.0","id":32,"method":"session/list","params":{"query":"x"}'),
        "invalid JSON",
        32,
        id="unclosed-object",
    ),
    pytest.param(
        _lsp(b'{"jsonrpc":"2.0","id":"s\xffx","method":"session/list"}'), "UTF-8", None, id="invalid-utf8-in-the-id"
    ),
]


@pytest.mark.parametrize("data, says, answer_id", BAD_FRAMES)
async def test_bad_frames_get_a_parse_error_and_the_server_goes_on(
    raw: RawServer, sessions_root: Path, data: bytes, says: str, answer_id: object
):
    await seed(raw)
    before = snapshot(sessions_root)
    raw.send_raw(data)
    answer = await raw.response()
    assert answer["id"] == answer_id and answer["error"]["code"] == -32700
    assert says in answer["error"]["message"] and answer["error"]["data"]["kind"] == "parseError"
    await still_serving(raw)
    assert snapshot(sessions_root) == before


async def test_a_json_line_inside_lsp_framing_is_served_and_the_next_frame_too(raw: RawServer):
    """A bare JSON-RPC line swallowed the frame after it, and was never answered itself."""
    await seed(raw)
    line = b'{"jsonrpc":"2.0","id":"line","method":"session/getTree","params":{"sessionId":"keep"}}\n'
    raw.send_raw(line + _lsp(b'{"jsonrpc":"2.0","id":"framed","method":"session/list","params":{}}'))
    answers = {answer["id"]: answer for answer in [await raw.response(), await raw.response()]}
    assert len(answers["line"]["result"]["nodes"]) == 2
    assert answers["framed"]["result"]["sessions"][0]["sessionId"] == "keep"
    # Junk lines that are no message: one parse error for the run, and the frame after it is served.
    raw.send_raw(
        b"some noise\r\n{not json}\r\n" + _lsp(b'{"jsonrpc":"2.0","id":"after","method":"session/list","params":{}}')
    )
    noise, after = await raw.response(), await raw.response()
    assert noise["id"] is None and noise["error"]["code"] == -32700
    assert after["id"] == "after" and "result" in after
    await still_serving(raw)


async def test_a_short_content_length_resyncs_on_the_next_header(raw: RawServer):
    await seed(raw)
    body = b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}'
    # Claims 10 bytes fewer than it sends: the tail is junk glued to the next frame's header.
    raw.send_raw(b"Content-Length: %d\r\n\r\n%b" % (len(body) - 10, body))
    answer = await raw.response()
    assert answer["error"]["code"] == -32700
    await still_serving(raw)


async def test_an_oversized_frame_is_skipped_with_payload_too_large(sessions_root: Path):
    raw = await RawServer.start()
    try:
        await raw.initialize(sessions_root)
        size = 64 * 1024 * 1024 + 1
        # Its id is read from the head of the body before the rest is skipped (it was answered with id null).
        head = b'{"jsonrpc":"2.0","id":"big","method":"session/append","params":{"sessionId":"keep","entries":"'
        raw.send_raw(b"Content-Length: %d\r\n\r\n" % size + head)
        left = size - len(head)
        chunk = b" " * (1 << 20)
        for _ in range(left // len(chunk)):
            raw.send_raw(chunk)
            await raw.process.stdin.drain()  # type: ignore[union-attr]
        raw.send_raw(b" " * (left % len(chunk)))
        answer = await raw.response(timeout=30)
        assert answer["id"] == "big"
        assert answer["error"]["code"] == -33011 and answer["error"]["data"]["kind"] == "payloadTooLarge"
        assert (await raw.request("session/list", {}))["result"]["sessions"] == []
    finally:
        await raw.stop()


ENVELOPES = [
    pytest.param([{"jsonrpc": "2.0", "id": 1, "method": "session/list"}], None, -32600, id="batch"),
    pytest.param("just a string", None, -32600, id="scalar"),
    pytest.param({"jsonrpc": "1.0", "id": 7, "method": "session/list"}, 7, -32600, id="wrong-version"),
    pytest.param({"id": 8, "method": "session/list"}, 8, -32600, id="no-version"),
    pytest.param({"jsonrpc": "2.0", "id": 9, "method": 42}, 9, -32600, id="method-not-string"),
    pytest.param({"jsonrpc": "2.0", "id": {"x": 1}, "method": "session/list"}, None, -32600, id="object-id"),
    pytest.param({"jsonrpc": "2.0", "id": True, "method": "session/list"}, None, -32600, id="bool-id"),
    pytest.param({"jsonrpc": "2.0", "id": 10}, 10, -32600, id="no-method"),
    pytest.param({"jsonrpc": "2.0", "id": 11, "method": "session/nope"}, 11, -32601, id="unknown-method"),
    pytest.param(
        {"jsonrpc": "2.0", "id": 12, "method": "session/list", "params": [1, 2]}, 12, -32602, id="array-params"
    ),
]


@pytest.mark.parametrize("message, answer_id, code", ENVELOPES)
async def test_bad_envelopes_are_answered(raw: RawServer, sessions_root: Path, message, answer_id, code):
    await seed(raw)
    before = snapshot(sessions_root)
    raw.send(message)
    answer = await raw.response()
    assert answer["id"] == answer_id and answer["error"]["code"] == code
    assert isinstance(answer["error"]["data"]["kind"], str) and answer["error"]["message"]
    await still_serving(raw)
    assert snapshot(sessions_root) == before


async def test_a_malformed_notification_gets_no_answer(raw: RawServer):
    raw.send({"jsonrpc": "1.0", "method": "session/list"})
    raw.send({"jsonrpc": "2.0", "method": "some/unknownNotification"})
    answer = await raw.request("session/list", {}, msg_id="after")
    assert answer["id"] == "after" and "result" in answer


async def test_a_request_without_params_is_answered(raw: RawServer):
    raw.send({"jsonrpc": "2.0", "id": "np", "method": "session/list"})
    assert (await raw.response())["result"]["sessions"] == []
    raw.send({"jsonrpc": "2.0", "id": "np2", "method": "session/create"})
    answer = await raw.response()
    assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "cwd"


PARAMS = [
    pytest.param("session/create", {"cwd": 5}, "cwd", id="wrong-type"),
    pytest.param("session/create", {"cwd": "/w", "sesionId": "typo"}, "sesionId", id="unknown-field"),
    pytest.param("session/append", {"sessionId": "keep", "entries": {"a": 1}}, "entries", id="not-a-list"),
    pytest.param("session/append", {"sessionId": "keep", "entries": [1]}, "entries[0]", id="bad-item"),
    pytest.param("session/buildContext", {"sessionId": "keep", "format": "xml"}, "format", id="bad-literal"),
    pytest.param("session/list", {"limit": "ten"}, "limit", id="limit-string"),
    # A NUL in a file name or a folder (it reached the file system, which raised: an internal error).
    pytest.param("session/list", {"cwd": "/w\x00"}, "cwd", id="nul-in-list-cwd"),
    pytest.param(
        "session/export",
        {"sessionId": "keep", "format": "html", "path": "/tmp/o\x00.html"},
        "path",
        id="nul-in-export-path",
    ),
    pytest.param("session/open", {"path": "/tmp/a\x00b.jsonl"}, "path", id="nul-in-open-path"),
    pytest.param("session/import", {"tool": "codex", "paths": ["/tmp/a", "/tmp/x\x00y"]}, "paths", id="nul-in-paths"),
    pytest.param("history/add", {"prompt": "p", "cwd": "/w\x00"}, "cwd", id="nul-in-history-cwd"),
]


@pytest.mark.parametrize("method, params, field", PARAMS)
async def test_wrong_params_name_the_field(raw: RawServer, sessions_root: Path, method, params, field):
    await seed(raw)
    before = snapshot(sessions_root)
    answer = await raw.request(method, params)
    error = answer["error"]
    assert error["code"] == -32602 and error["data"]["field"] == field and field in error["message"]
    assert error["data"]["method"] == method
    assert snapshot(sessions_root) == before
    await still_serving(raw)


LONG = "/" + "d" * 300  # one name past what a file system holds (255 bytes)


@pytest.mark.parametrize(
    "method, params",
    [
        pytest.param("session/list", {"cwd": LONG}, id="list-cwd"),
        pytest.param("session/continueRecent", {"cwd": LONG}, id="continue-recent-cwd"),
        pytest.param("session/open", {"path": "x" * 300 + ".jsonl"}, id="open-path"),
        pytest.param("session/move", {"sessionId": "keep", "cwd": LONG}, id="move-cwd"),
    ],
)
async def test_a_name_longer_than_the_file_system_allows_is_bad_params(
    raw: RawServer, sessions_root: Path, method, params
):
    """ENAMETOOLONG from the file system was an internal error; it says which name to shorten."""
    await seed(raw)
    before = snapshot(sessions_root)
    error = (await raw.request(method, params))["error"]
    assert error["code"] == -32602, error
    assert "longer than the file system allows" in error["message"] or error["data"]["field"] == "cwd", error
    assert snapshot(sessions_root) == before
    await still_serving(raw)


async def test_a_cwd_whose_folder_name_no_file_system_holds_is_refused_at_create(raw: RawServer, sessions_root: Path):
    """pi's layout names the project folder after the cwd: past 255 bytes the session could never be
    written (the first append was an internal error). Refused at create, naming the field."""
    await seed(raw)
    error = (await raw.request("session/create", {"cwd": "/" + "é" * 130}))["error"]  # 260 bytes, 130 characters
    assert error["code"] == -32602 and error["data"]["field"] == "cwd" and "255" in error["message"], error
    made = await raw.request("session/create", {"cwd": "/" + "é" * 120})  # 240 bytes and the dashes: fits
    assert "result" in made, made
    appended = await raw.request(
        "session/append", {"sessionId": made["result"]["sessionId"], "entries": [user("hi"), assistant("hello")]}
    )
    assert "result" in appended, appended


async def test_service_errors_carry_codes_and_data(raw: RawServer, sessions_root: Path, tmp_path: Path):
    path = await seed(raw)
    scratch = tmp_path / "stored"
    before = stored_state(sessions_root, scratch)
    unknown = await raw.request("session/getTree", {"sessionId": "ghost"})
    assert unknown["error"]["code"] == -33001 and unknown["error"]["data"] == {
        "kind": "sessionNotFound",
        "sessionId": "ghost",
    }
    bad_id = await raw.request("session/getTree", {"sessionId": "../etc"})
    assert bad_id["error"]["code"] == -33002
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(Path(path).read_text())
    escaped = await raw.request("session/open", {"path": str(outside)})
    if ON_POSTGRES:  # no files to be outside of: a filesystem path is not a place (PROTOCOL.md "PostgreSQL store")
        assert escaped["error"]["code"] == -32602 and escaped["error"]["data"]["field"] == "path"
    else:
        assert escaped["error"]["code"] == -33007 and escaped["error"]["data"]["root"] == str(sessions_root)
    missing_entry = await raw.request("session/branch", {"sessionId": "keep", "entryId": "nope"})
    assert missing_entry["error"]["code"] == -33003
    bad_entry = await raw.request(
        "session/append", {"sessionId": "keep", "entries": [{"type": "message", "message": {}}]}
    )
    assert bad_entry["error"]["code"] == -32602 and bad_entry["error"]["data"]["index"] == 0
    assert bad_entry["error"]["data"]["field"] == "entries[0].message.role"
    not_an_entry = await raw.request("session/append", {"sessionId": "keep", "entries": [{"message": {}}]})
    assert not_an_entry["error"]["code"] == -33009 and not_an_entry["error"]["data"]["index"] == 0
    exists = await raw.request("session/create", {"cwd": "/w", "sessionId": "keep"})
    assert exists["error"]["code"] == -33008
    assert stored_state(sessions_root, scratch) == before


async def test_a_damaged_file_is_reported_and_left_alone(raw: RawServer, sessions_root: Path):
    folder = sessions_root / "--w--"
    folder.mkdir()
    damaged = folder / "2025-01-01T00-00-00-000Z_broken.jsonl"
    damaged.write_bytes(b"\x00\x01 this is not json\n{also not}\n")
    before = snapshot(sessions_root)
    answer = await raw.request("session/open", {"sessionId": "broken"})
    assert answer["error"]["code"] == -33006 and answer["error"]["data"]["path"] == str(damaged)
    assert "left unchanged" in answer["error"]["message"]
    assert snapshot(sessions_root) == before


async def test_reusing_an_id_in_flight_is_refused(raw: RawServer, sessions_root: Path):
    await seed(raw)
    # Two requests with one id back to back, in one write (so the first cannot be done
    # before the second is read): the second is refused, the first answered.
    request = {"jsonrpc": "2.0", "id": "dup", "method": "session/list", "params": {}}
    raw.send_raw(frame(request) + frame(request))
    answers = [await raw.response(), await raw.response()]
    assert sorted("error" in a for a in answers) == [False, True]
    refused = next(a for a in answers if "error" in a)
    assert refused["error"]["code"] == -32600
