"""Pipelined appends read together run together (SidecarProtocol._join_run / flush_run,
operations.appending.Appending.run): one write of their lines, and every answer, line and error exactly what
the same appends sent one at a time give."""

from __future__ import annotations

import errno
import json
import re
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest
from store_mode import ON_POSTGRES

from sidecar.store.files import writer as writer_module

from .piped import PipedServer

FAIL_MARK = "FAIL-HERE"


def _fail_writes_of_the_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session file's write holding FAIL_MARK fails as a full disk would; the others are written."""
    original = writer_module._write_all

    def failing(fd: int, data: bytes) -> None:
        if FAIL_MARK.encode() in data:
            raise OSError(errno.ENOSPC, "No space left on device")
        original(fd, data)

    monkeypatch.setattr(writer_module, "_write_all", failing)


class _Harness(PipedServer):
    """The protocol fed message by message; ``flush`` is what the server's loop does when
    input has no more frames ready."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.root = root
        # Session ids of this harness alone (on PostgreSQL every test's sessions share one database);
        # the calls say "s" and "t", the answers are read back with "s" and "t".
        self.ids = {name: f"{name}-{uuid.uuid4().hex[:12]}" for name in ("s", "t")}
        self.order: list[Any] = []  # ids as their answers came

    def send(self, method: str, params: Any) -> int:
        if isinstance(params, dict) and params.get("sessionId") in self.ids:
            params = {**params, "sessionId": self.ids[params["sessionId"]]}
        return self.feed(method, params)

    def flush(self) -> None:
        self.server.protocol.flush_run()

    async def settle(self) -> dict[Any, dict[str, Any]]:
        self.flush()
        await self.server.protocol.drain()
        self.server.protocol._frame_writer.flush()  # type: ignore[union-attr]
        data = self.written()
        # (Each harness has its root, and its session file's name the time it was made.)
        text = re.sub(r"\d{4}-\d\d-\d\dT[\d-]+Z_", "TIME_", data.decode().replace(str(self.root), "ROOT"))
        for name, session_id in self.ids.items():
            text = text.replace(session_id, name)
        answers = [json.loads(line) for line in text.splitlines()]
        self.order.extend(a.get("id") for a in answers)
        return {a["id"]: a for a in answers}

    async def file(self, name: str) -> bytes:
        """The session's lines after its header (whose timestamp is the clock's): its file's bytes,
        or on PostgreSQL its entries as getEntries gives them."""
        session_id = self.ids[name]
        if not ON_POSTGRES:
            [path] = [p for p in (self.root / "sessions").rglob(f"*_{session_id}.jsonl")]
            return path.read_bytes().split(b"\n", 1)[1]
        sent = self.send("session/getEntries", {"sessionId": session_id})
        entries = (await self.settle())[sent]["result"]["entries"]
        self.order.remove(sent)
        return b"".join(msgspec.json.encode(e) + b"\n" for e in entries)


def _user(entry_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text},
    }


async def _started(root: Path, fsync: str = "never") -> _Harness:
    h = _Harness(root)
    h.send("initialize", {"sessionRoot": str(root / "sessions"), "settings": {"store": {"fsync": fsync}}})
    h.send("session/create", {"cwd": "/w", "sessionId": "s"})
    await h.settle()
    h.send(
        "session/append",
        {
            "sessionId": "s",
            "entries": [
                _user("u0", "hi"),
                {
                    "type": "message",
                    "id": "a0",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "hello"}],
                        "stopReason": "stop",
                    },
                },
            ],
        },
    )
    answers = await h.settle()
    assert all("result" in a for a in answers.values()), answers
    h.order.clear()
    return h


# A run with failures among good appends: bad params, a duplicate id, an unknown parent,
# a stale expected leaf, an empty batch, an explicit parent (a branch) and an unknown session.
_CALLS: list[Any] = [
    {"sessionId": "s", "entries": [_user("e1", "one")]},
    {"sessionId": "s", "entries": "not a list"},
    {"sessionId": "s", "entries": [_user("e2", "two"), _user("e3", "three")]},
    {"sessionId": "s", "entries": [_user("e1", "the id is taken")]},
    {"sessionId": "s", "entries": [_user("e4", "four")], "parentId": "nowhere"},
    {"sessionId": "s", "entries": [_user("e5", "five")], "expectedLeafId": "e1"},
    {"sessionId": "s", "entries": []},
    {"sessionId": "s", "entries": [_user("e6", "six")], "parentId": "a0"},
    {
        "sessionId": "s",
        "entries": [
            {"type": "label", "targetId": "e2", "label": "x", "id": "l1", "timestamp": "2026-01-01T00:00:00.000Z"}
        ],
    },
    {"sessionId": "nobody", "entries": [_user("n1", "no such session")]},
    {"sessionId": "s", "entries": [_user("e7", "seven")], "expectedLeafId": "l1"},
    {"sessionId": "s", "entries": [_user("e8", "eight")]},
]


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Session-file writes: one count per write call."""
    writes: list[int] = []
    original = writer_module._write_all

    def counting(fd: int, data: bytes) -> None:
        writes.append(data.count(b"\n"))
        original(fd, data)

    monkeypatch.setattr(writer_module, "_write_all", counting)
    return writes


async def _pipelined(root: Path, calls: list[Any]) -> tuple[dict[Any, Any], list[Any], _Harness]:
    h = await _started(root)
    for params in calls:
        h.send("session/append", params)
    answers = await h.settle()
    return answers, h.order, h


async def _one_at_a_time(root: Path, calls: list[Any]) -> tuple[dict[Any, Any], list[Any], _Harness]:
    h = await _started(root)
    for params in calls:
        h.send("session/append", params)
        h.flush()
    answers = await h.settle()
    return answers, h.order, h


async def test_a_run_with_failures_answers_each_as_one_at_a_time_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    writes = _count_writes(monkeypatch)
    alone, alone_order, alone_h = await _one_at_a_time(tmp_path / "alone", _CALLS)
    alone_writes = len(writes)
    writes.clear()
    run, run_order, run_h = await _pipelined(tmp_path / "run", _CALLS)

    assert run == alone
    # In the order the calls were sent, but for the unknown session's: not inline, it is answered
    # once the loop turns (as before runs: pipelined, an inline call does not wait for one that is not).
    # (On PostgreSQL no append runs inline: each answers as its turn ends.)
    assert run_order == alone_order if not ON_POSTGRES else sorted(run_order) == sorted(alone_order)
    assert ON_POSTGRES or run_order == [n for n in range(4, 16) if n != 13] + [13]
    assert (await run_h.file("s")) == (await alone_h.file("s"))  # the same lines, in the same order
    failed = sorted(i for i, a in run.items() if "error" in a)
    assert failed == [5, 7, 8, 9, 13], run  # (ids: initialize, create, first append, then _CALLS)
    assert run[5]["error"]["code"] == -32602  # bad params, in the middle of the run
    assert run[9]["error"]["data"]["entryIds"] == ["e2", "e3"]  # the refusal saw the lines written before it
    assert run[15]["result"]["entries"][0]["parentId"] == "e7"
    # Fewer writes than calls: the good appends around each failure went out together.
    # (Each count has the first append's, which made the file.) The bad params are answered
    # where they are read, after the run before them: [e1] [e2 e3 (two failures)] [e5 refused alone]
    # [empty, e6, label] [the unknown session, not inline] [e7, e8].
    if ON_POSTGRES:  # (rows, not lines: PostgreSQL sessions append one call at a time, no file written)
        assert alone_writes == 0 and writes == []
    else:
        assert alone_writes == 7 and writes == [3, 1, 2, 2, 2], (alone_writes, writes)


# The calls of a run share their entries' set-up (store/appending.py run_batch): each call's own
# ids still clash only with the session's and its own, and a failed call's ids are free after it.
_ID_CALLS: list[Any] = [
    {"sessionId": "s", "entries": [_user("e1", "one"), {"type": "message", "id": "e2"}]},  # e2 has no message
    {"sessionId": "s", "entries": [_user("e1", "one again"), _user("e2", "two")]},
    {"sessionId": "s", "entries": [_user("e3", "three"), _user("e3", "three twice")]},
    {"sessionId": "s", "entries": [_user("e3", "three")]},
    {"sessionId": "s", "entries": [_user("e2", "the id is taken")]},
]


async def test_a_run_checks_each_calls_ids_as_one_at_a_time_does(tmp_path: Path):
    alone, alone_order, alone_h = await _one_at_a_time(tmp_path / "alone", _ID_CALLS)
    run, run_order, run_h = await _pipelined(tmp_path / "run", _ID_CALLS)

    assert run == alone
    assert [("error" in run[i]) for i in range(4, 9)] == [True, False, True, False, True], run
    assert run[8]["error"]["data"]["index"] == 0 and "already used" in run[8]["error"]["message"]
    assert (await run_h.file("s")) == (await alone_h.file("s"))


async def test_ids_drawn_in_a_run_are_new_and_each_its_own(tmp_path: Path):
    h = await _started(tmp_path)
    sent = [
        h.send(
            "session/append",
            {
                "sessionId": "s",
                "entries": [
                    {"type": "message", "message": {"role": "user", "content": f"{n}.{k}"}} for k in range(n % 3 + 1)
                ],
            },
        )
        for n in range(30)
    ]
    answers = await h.settle()
    ids = [e["id"] for i in sent for e in answers[i]["result"]["entries"]]
    assert len(ids) == sum(n % 3 + 1 for n in range(30)) == len(set(ids))
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and not {"u0", "a0"} & set(ids)
    lines = [json.loads(line) for line in (await h.file("s")).splitlines()]
    assert [line["id"] for line in lines[2:]] == ids
    assert [line["parentId"] for line in lines[2:]] == ["a0"] + ids[:-1]


async def test_a_failed_write_in_a_run_fails_its_own_call_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    calls = [{"sessionId": "s", "entries": [_user(f"e{n}", FAIL_MARK if n == 3 else f"text {n}")]} for n in range(1, 6)]
    _fail_writes_of_the_mark(monkeypatch)
    alone, _, alone_h = await _one_at_a_time(tmp_path / "alone", calls)
    run, run_order, run_h = await _pipelined(tmp_path / "run", calls)

    assert run == alone
    assert ON_POSTGRES or run_order == sorted(run_order)
    if ON_POSTGRES:  # (the failure is a session file's write: there is none)
        assert all("result" in run[i] for i in range(4, 9))
    else:
        assert [("error" in run[i]) for i in range(4, 9)] == [False, False, True, False, False]
        assert run[6]["error"]["data"]["latched"] is False  # cut back: disk and memory agree, the others went on
        assert FAIL_MARK.encode() not in (await run_h.file("s"))
    assert (await run_h.file("s")) == (await alone_h.file("s"))


async def test_a_failed_write_after_a_call_with_bad_lines_leaves_no_label_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A run prepared twice (a call's lines fail their schema) whose write then fails: the label it
    added leaves memory with its line, as alone."""
    calls = [
        {"sessionId": "s", "entries": [{"type": "message", "id": "bad"}]},
        {
            "sessionId": "s",
            "entries": [
                {
                    "type": "label",
                    "id": "l1",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "targetId": "u0",
                    "label": FAIL_MARK,
                }
            ],
        },
        {"sessionId": "s", "entries": [_user("e1", "one")]},
    ]
    _fail_writes_of_the_mark(monkeypatch)
    trees = []
    for name, made in (("alone", _one_at_a_time), ("run", _pipelined)):
        answers, _, h = await made(tmp_path / name, calls)
        sent = h.send("session/getTree", {"sessionId": "s"})
        trees.append((answers, (await h.settle())[sent]))
    assert trees[0] == trees[1]
    assert ON_POSTGRES or "error" in trees[1][0][5]
    assert ON_POSTGRES or FAIL_MARK not in json.dumps(trees[1][1])  # (PostgreSQL writes no file to fail)


async def test_a_run_is_cut_by_a_call_that_is_not_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Under the "assistant" policy an assistant message waits for an fsync (a worker thread):
    the appends read before it are answered first, those after it wait behind it."""
    assistant = {
        "type": "message",
        "id": "a1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "synced"}], "stopReason": "stop"},
    }
    h = await _started(tmp_path, fsync="assistant")
    sent = [
        h.send("session/append", {"sessionId": "s", "entries": [_user("e1", "one")]}),
        h.send("session/append", {"sessionId": "s", "entries": [_user("e2", "two")]}),
        h.send("session/append", {"sessionId": "s", "entries": [assistant]}),
        h.send("session/append", {"sessionId": "s", "entries": [_user("e3", "three")]}),
    ]
    answers = await h.settle()
    # (The last two share the assistant's fsync, then are answered in either order.)
    assert ON_POSTGRES or (h.order[:2] == sent[:2] and sorted(h.order[2:]) == sent[2:])
    assert [answers[i]["result"]["entries"][0]["parentId"] for i in sent] == ["a0", "e1", "e2", "a1"]
    lines = [json.loads(line) for line in (await h.file("s")).splitlines()]
    assert [line.get("id") for line in lines[-4:]] == ["e1", "e2", "a1", "e3"]


async def test_appends_to_two_sessions_read_together_keep_each_files_order(tmp_path: Path):
    h = await _started(tmp_path)
    h.send("session/create", {"cwd": "/w", "sessionId": "t"})
    await h.settle()
    h.send("session/append", {"sessionId": "t", "entries": [_user("t0", "hi")]})  # (creates its file: an fsync)
    await h.settle()
    h.order.clear()
    sent = [
        h.send("session/append", {"sessionId": sid, "entries": [_user(f"{sid}{n}", "x")]})
        for n in range(1, 4)
        for sid in ("s", "t")
    ]
    answers = await h.settle()
    assert (ON_POSTGRES or h.order == sent) and all("result" in answers[i] for i in sent)
    for sid, first in (("s", "a0"), ("t", "t0")):
        ids = [json.loads(line).get("id") for line in (await h.file(sid)).splitlines()]
        assert ids[-4:] == [first, f"{sid}1", f"{sid}2", f"{sid}3"]


@pytest.mark.parametrize(
    ("message", "answer_id", "code"),
    [
        pytest.param({"jsonrpc": "1.0", "id": 7}, 7, -32600, id="wrong-version"),
        pytest.param({"jsonrpc": "2.0", "id": True}, None, -32600, id="bool-id"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5}, None, -32600, id="float-id"),
        pytest.param({"jsonrpc": "2.0", "id": 7, "params": None}, 7, -32602, id="null-params"),
        pytest.param({"jsonrpc": "2.0", "id": 7, "params": [1]}, 7, -32602, id="array-params"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 7, "params": {"sessionId": "s", "entries": [], "extra": 1}},
            7,
            -32602,
            id="unknown-param",
        ),
        pytest.param({"jsonrpc": "2.0", "id": 7, "params": {"sessionId": 3, "entries": []}}, 7, -32602, id="bad-param"),
    ],
)
async def test_an_append_whose_envelope_or_params_are_wrong_is_answered_as_any_request(
    tmp_path: Path, message: dict[str, Any], answer_id: Any, code: int
):
    """session/append's envelope and params are decoded at once (SidecarProtocol.handle_body);
    what does not fit that is checked as every request is."""
    h = await _started(tmp_path)
    h.server.protocol.handle_body(msgspec.json.encode({**message, "method": "session/append"}))
    h.flush()
    [answer] = (await h.settle()).values()
    assert answer["id"] == answer_id and answer["error"]["code"] == code, answer
    if code == -32602:
        assert answer["error"]["data"]["kind"] == "invalidParams"
