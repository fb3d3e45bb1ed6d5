"""Byte-level protocol fuzzing: whatever bytes arrive, every id sent is answered exactly once.

test_fuzz.py throws malformed envelopes and junk at the server; this one
takes well-formed requests and breaks them the ways real clients do at the
byte level: invalid UTF-8 inside a string (and inside the id), lone and
reversed surrogate escapes (``"\\ud83d"``, as JavaScript writes a cut emoji),
a Content-Length too short or too long, a body over the 64 MiB limit, JSON
lines mixed into LSP framing, junk lines, the same id twice in flight. It
sends them in batches to a real sidecar over stdio (LSP, and JSON lines told
from the first byte) and over a unix socket, and checks after each batch:

* every request with a readable id is answered exactly once with that id
  (the same id sent twice: twice); a request another frame's wrong length
  broke is answered at most once; no answer carries an id nobody sent;
* what must succeed succeeds (well-formed appends, JSON lines inside LSP
  framing) and what cannot be read is a parse error with its id;
* the process keeps serving, and at the end nothing stored is lost: a fresh
  sidecar reopens the session and finds every entry whose append was
  answered with a result, each parentId pointing at an entry that is there.

Lone surrogates are only checked to be answered once: whether they are
accepted is the JSON decoder's business, not the framing's.

``SIDECAR_BYTE_FUZZ_FRAMES`` sets the frames per transport (default 1,500;
a soak: 100,000) and ``SIDECAR_BYTE_FUZZ_SEED`` the seed (default 0: the
same bytes every run).
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from .harness import SERVER, user

FRAMES = int(os.environ.get("SIDECAR_BYTE_FUZZ_FRAMES", "1500"))
SEED = int(os.environ.get("SIDECAR_BYTE_FUZZ_SEED", "0"))
BATCH = 150  # units (one or two frames each) per batch
MAX_OVERSHOOT = 60  # a Content-Length at most this much too long; shorter than any frame
PADDING = b"\r\n" * MAX_OVERSHOOT  # after a batch: what a last too-long frame reads instead of the ping
LIMIT = 64 * 1024 * 1024  # the server's MAX_MESSAGE_BYTES
TIMEOUT = 30.0
SESSION = "fz"

# Text for strings: ASCII, escapes JSON needs, non-ASCII of every UTF-8 length, a real surrogate pair.
ALPHABET = 'ab z09"\\/\t\n\u00e9\u6f22\u2028\U0001f600'
INVALID_UTF8 = [b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xc0\xaf"]
SURROGATES = [b"\\ud83d", b"\\ude00\\ud83d", b"\\udc00", b"\\ud83d\\ud83d", b"\\ud800x"]


# -- the bytes ---------------------------------------------------------------------------


def lsp(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body) if length is None else length, body)


def envelope(msg_id: Any, method: str, params: bytes, id_last: bool = False) -> bytes:
    """A request's JSON, written by hand so that its strings can hold any bytes."""
    raw_id = json.dumps(msg_id).encode()
    if id_last:
        return b'{"jsonrpc":"2.0","method":"%s","params":%s,"id":%s}' % (method.encode(), params, raw_id)
    return b'{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}' % (raw_id, method.encode(), params)


def json_string(rnd: random.Random, inject: bytes = b"") -> bytes:
    """A JSON string of random text, with ``inject`` put between two of its characters as it is."""
    text = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 30)))
    cut = rnd.randint(0, len(text))
    ascii_only = rnd.random() < 0.5  # \uXXXX escapes (a surrogate pair for the emoji), or raw UTF-8
    before, after = (json.dumps(part, ensure_ascii=ascii_only).encode() for part in (text[:cut], text[cut:]))
    return before[:-1] + inject + after[1:]


def request(rnd: random.Random, msg_id: Any, inject: bytes = b"", id_last: bool = False) -> bytes:
    """An append (mostly) or a read, with ``inject`` inside its text."""
    text = json_string(rnd, inject)
    kind = rnd.random()
    if kind < 0.75:
        entry = b'{"type":"message","message":{"role":"user","content":[{"type":"text","text":%s}]}}' % text
        return envelope(
            msg_id, "session/append", b'{"sessionId":"%s","entries":[%s]}' % (SESSION.encode(), entry), id_last
        )
    if kind < 0.9:
        return envelope(msg_id, "session/list", b'{"query":%s}' % text, id_last)
    return envelope(
        msg_id,
        "session/getTree",
        b'{"sessionId":"%s","x":%s}' % (SESSION.encode(), text) if inject else b'{"sessionId":"%s"}' % SESSION.encode(),
        id_last,
    )


@dataclass
class Unit:
    """One or two frames and what is owed for them."""

    data: bytes
    ids: collections.Counter[Any] = field(default_factory=collections.Counter)  # id -> answers owed
    succeeds: bool = False  # each answer but a duplicate's is a result
    error: int | None = None  # each answer is this error
    overlong: int = 0  # how much too long its Content-Length is: it reads that far into the units after it
    truncated: bool = False  # its Content-Length is too short: its tail ends on the next unit's first line


class Batch:
    """Units to send and the answers owed: exactly (``exact``) or at most (``at_most``, for a frame
    the wrong length of the one before it broke)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.exact: collections.Counter[Any] = collections.Counter()
        self.at_most: collections.Counter[Any] = collections.Counter()
        self.succeeds: set[Any] = set()
        self.errors: dict[Any, int] = {}
        self.frames = 0

    def add(self, unit: Unit, victim: bool) -> None:
        self.parts.append(unit.data)
        self.frames += max(1, sum(unit.ids.values()))
        if victim:
            self.at_most.update(unit.ids)
            return
        self.exact.update(unit.ids)
        if unit.succeeds:
            self.succeeds.update(unit.ids)
        if unit.error is not None:
            self.errors.update(dict.fromkeys(unit.ids, unit.error))


class Units:
    """The kinds of unit, drawn with a seeded Random; fresh ids from one counter (strings and integers)."""

    def __init__(self, rnd: random.Random, framing: str) -> None:
        self.rnd = rnd
        self.framing = framing
        self._ids = itertools.count(1)
        self.drawn = collections.Counter[str]()

    def new_id(self) -> Any:
        n = next(self._ids)
        return f"b{n}" if n % 2 else 10**6 + n

    def frame(self, body: bytes) -> bytes:
        return lsp(body) if self.framing == "lsp" else body + b"\n"

    def draw(self) -> Unit:
        rnd = self.rnd
        kinds = LSP_KINDS if self.framing == "lsp" else JSONL_KINDS
        kind = rnd.choices(list(kinds), weights=list(kinds.values()))[0]
        self.drawn[kind] += 1
        return getattr(self, kind)()

    # each kind

    def valid(self) -> Unit:
        msg_id = self.new_id()
        return Unit(
            self.frame(request(self.rnd, msg_id, id_last=self.rnd.random() < 0.2)),
            collections.Counter([msg_id]),
            succeeds=True,
        )

    def json_line(self) -> Unit:
        """A JSON-RPC request on a line of its own inside LSP framing: served as one."""
        msg_id = self.new_id()
        return Unit(request(self.rnd, msg_id) + b"\n", collections.Counter([msg_id]), succeeds=True)

    def bad_utf8(self) -> Unit:
        msg_id = self.new_id()
        body = request(self.rnd, msg_id, self.rnd.choice(INVALID_UTF8), id_last=self.rnd.random() < 0.3)
        data = body + b"\n" if self.framing == "jsonl" or self.rnd.random() < 0.2 else lsp(body)
        return Unit(data, collections.Counter([msg_id]), error=-32700)

    def surrogate(self) -> Unit:
        msg_id = self.new_id()
        return Unit(self.frame(request(self.rnd, msg_id, self.rnd.choice(SURROGATES))), collections.Counter([msg_id]))

    def truncated(self) -> Unit:
        msg_id = self.new_id()
        body = request(self.rnd, msg_id)
        keep = body.index(b',"method"') + 1  # the id stays whole
        return Unit(
            lsp(body, self.rnd.randint(keep, len(body) - 1)),
            collections.Counter([msg_id]),
            error=-32700,
            truncated=True,
        )

    def overlong(self) -> Unit:
        msg_id = self.new_id()
        body = request(self.rnd, msg_id)
        # Whatever it reads past its body: trailing junk (a parse error) or blank lines (served).
        overshoot = self.rnd.randint(1, MAX_OVERSHOOT)
        return Unit(lsp(body, len(body) + overshoot), collections.Counter([msg_id]), overlong=overshoot)

    def duplicate(self) -> Unit:
        """Two requests with one id, sent together: the second, read while the first is in flight, is refused."""
        msg_id = self.new_id()
        data = self.frame(request(self.rnd, msg_id)) + self.frame(request(self.rnd, msg_id))
        return Unit(data, collections.Counter({msg_id: 2}))

    def junk(self) -> Unit:
        noise = bytes(self.rnd.randrange(256) for _ in range(self.rnd.randint(1, 50)))
        noise = noise.lower().replace(b"content-length", b"c-l").replace(b"\n", b" ").lstrip(b"{[ \t\r")
        return Unit((noise or b"?") + b"\r\n")

    def bad_id(self) -> Unit:
        """Invalid UTF-8 inside the id itself: no id can be read (answered with id null)."""
        return Unit(self.frame(b'{"jsonrpc":"2.0","id":"id\xff","method":"session/list","params":{}}'))

    def notification(self) -> Unit:
        return Unit(self.frame(b'{"jsonrpc":"2.0","method":"$/fuzz","params":{"x":%s}}' % json_string(self.rnd)))


LSP_KINDS = {
    "valid": 30,
    "json_line": 8,
    "bad_utf8": 14,
    "surrogate": 10,
    "truncated": 7,
    "overlong": 6,
    "duplicate": 8,
    "junk": 7,
    "bad_id": 3,
    "notification": 3,
}
JSONL_KINDS = {
    "valid": 40,
    "bad_utf8": 18,
    "surrogate": 14,
    "duplicate": 10,
    "junk": 10,
    "bad_id": 4,
    "notification": 4,
}


def make_batch(units: Units, count: int) -> Batch:
    batch = Batch()
    overshoot = 0  # bytes a too-long Content-Length before still takes from the units that follow
    open_line = False  # the bytes before end inside a line: the tail of a body cut short, or of one broken
    for _ in range(count):
        unit = units.draw()
        if open_line and not unit.data.startswith(b"Content-Length"):
            # An LSP body has no newline of its own: a broken one's tail runs on to the end of the line,
            # so a frame that is a line of its own (JSON, junk) must start a new one.
            batch.parts.append(b"\r\n")
            overshoot -= 2
        victim = overshoot > 0
        batch.add(unit, victim)
        overshoot = max(overshoot - len(unit.data), unit.overlong)
        open_line = unit.truncated or (victim and not unit.data.endswith(b"\n"))
    batch.parts.append(PADDING if units.framing == "lsp" else b"")
    return batch


# -- a client that counts answers ----------------------------------------------------------


class Peer:
    """Bytes to a sidecar and every answer back, filed by id as a reader thread gets them."""

    def __init__(self, out: BinaryIO, into: BinaryIO, framing: str) -> None:
        self._out, self._in, self.framing = out, into, framing
        self.answers: dict[Any, list[dict[str, Any]]] = collections.defaultdict(list)
        self.null_answers = 0
        self._cond = threading.Condition()
        self._ping = itertools.count(1)
        self._reader = threading.Thread(target=self._read_all, daemon=True)
        self._reader.start()

    def _read_all(self) -> None:
        while (message := self._read_one()) is not None:
            if "method" in message:
                continue  # a notification of ours to the client
            with self._cond:
                if message.get("id") is None:
                    self.null_answers += 1
                else:
                    self.answers[message["id"]].append(message)
                self._cond.notify_all()

    def _read_one(self) -> dict[str, Any] | None:
        if self.framing == "jsonl":
            line = self._in.readline()
            return json.loads(line) if line.endswith(b"\n") else None
        length = None
        while (line := self._in.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not line or length is None:
            return None
        body = self._in.read(length)
        return json.loads(body) if len(body) == length else None

    def send(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def call(self, method: str, params: Any) -> Any:
        msg_id = f"ping{next(self._ping)}"
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
        self.send(lsp(body) if self.framing == "lsp" else body + b"\n")
        self.wait_for([msg_id])
        answer = self.answers[msg_id][0]
        assert "result" in answer, answer
        return answer["result"]

    def snapshot(self) -> dict[Any, list[dict[str, Any]]]:
        with self._cond:
            return {msg_id: list(found) for msg_id, found in self.answers.items()}

    def wait_for(self, ids: Any, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while missing := [i for i in ids if not self.answers.get(i)]:
                left = deadline - time.monotonic()
                assert left > 0, f"never answered: {missing[:5]}"
                self._cond.wait(left)


# -- the sidecars ------------------------------------------------------------------------


@dataclass
class Sidecar:
    process: subprocess.Popen[bytes]
    peer: Peer
    files: list[Any]

    def stop(self) -> int:
        """``shutdown`` and ``exit`` over stdio, SIGTERM for a socket server; the exit code."""
        if self.process.stdin is not None:
            self.peer.call("shutdown", None)
            self.peer.send(
                b'Content-Length: 33\r\n\r\n{"jsonrpc":"2.0","method":"exit"}'
                if self.peer.framing == "lsp"
                else b'{"jsonrpc":"2.0","method":"exit"}\n'
            )
        else:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(TIMEOUT)
        finally:
            for file in self.files:
                file.close()


def start_stdio(root: Path, framing: str) -> Sidecar:
    """A sidecar started without --jsonl: it serves the framing of the client's first byte."""
    process = subprocess.Popen(
        [*SERVER, "serve", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    peer = Peer(process.stdin, process.stdout, framing)
    return Sidecar(process, peer, [process.stdin, process.stdout])


def start_socket(root: Path, path: Path) -> Sidecar:
    process = subprocess.Popen(
        [*SERVER, "serve", "--socket", str(path), "--root", str(root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    while b"ready" not in (line := process.stdout.readline()):
        assert line, "the sidecar exited before it was ready"
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(str(path))
    out, into = connection.makefile("wb"), connection.makefile("rb")
    return Sidecar(process, Peer(out, into, "lsp"), [out, into, connection, process.stdout])


def initialize(peer: Peer, root: Path) -> None:
    peer.call("initialize", {"clientInfo": {"name": "byte-fuzz"}, "protocolVersion": "1.0", "sessionRoot": str(root)})


def open_session(peer: Peer) -> None:
    opened = peer.call("session/open", {"sessionId": SESSION})
    assert opened["sessionId"] == SESSION


# -- the oracle ----------------------------------------------------------------------------


def check_batch(peer: Peer, batch: Batch, sent: set[Any]) -> None:
    """Every owed id answered exactly as often as owed, at most where a frame was broken, nothing else."""
    peer.wait_for(batch.exact)
    answers = peer.snapshot()
    for msg_id, owed in batch.exact.items():
        got = answers[msg_id]
        assert len(got) == owed, (msg_id, got)
        if msg_id in batch.errors:
            assert all(a.get("error", {}).get("code") == batch.errors[msg_id] for a in got), (msg_id, got)
        if msg_id in batch.succeeds:
            assert "result" in got[0], (msg_id, got)
        if owed == 2:  # the same id twice: one ran; the other ran too (the first was done) or was refused
            assert any("result" in a for a in got), got
            refused = [a for a in got if "error" in a]
            assert all(
                a["error"]["code"] == -32600 and a["error"]["data"]["reason"] == "duplicateId" for a in refused
            ), got
    for msg_id, allowed in batch.at_most.items():
        assert len(answers.get(msg_id, [])) <= allowed, (msg_id, answers[msg_id])
    strangers = [msg_id for msg_id in answers if msg_id not in sent and not str(msg_id).startswith("ping")]
    assert not strangers, strangers[:5]
    internal = [a for got in answers.values() for a in got if a.get("error", {}).get("code") == -32603]
    assert not internal, f"internal errors for bad input: {internal[:3]}"


def appended_ids(peer: Peer) -> set[str]:
    """The ids of every entry an append was answered with."""
    return {
        entry["id"]
        for got in peer.answers.values()
        for answer in got
        if isinstance(answer.get("result"), dict) and "leafId" in answer["result"] and "entries" in answer["result"]
        for entry in answer["result"]["entries"]
    }


def fuzz(sidecar: Sidecar, framing: str, frames: int, seed: int) -> dict[str, Any]:
    peer = sidecar.peer
    units = Units(random.Random(f"{seed}-{framing}"), framing)
    sent: set[Any] = set()
    totals = collections.Counter[str]()
    if framing == "lsp":
        totals["frames"] += send_oversized(peer, units, sent)
    while totals["frames"] < frames:
        batch = make_batch(units, BATCH)
        sent.update(batch.exact, batch.at_most)
        peer.send(b"".join(batch.parts))
        assert peer.call("session/getTree", {"sessionId": SESSION})["nodes"], "the server stopped serving"
        check_batch(peer, batch, sent)
        assert sidecar.process.poll() is None, "the server died"
        totals["frames"] += batch.frames
        totals["owed"] += sum(batch.exact.values())
        totals["brokenByAnother"] += len(batch.at_most)
    totals["nullAnswers"] = peer.null_answers
    totals["refusedDuplicates"] = sum(
        1
        for got in peer.answers.values()
        for answer in got
        if answer.get("error", {}).get("data", {}).get("reason") == "duplicateId"
    )
    return {**totals, **units.drawn}


def send_oversized(peer: Peer, units: Units, sent: set[Any]) -> int:
    """A body one byte over the limit: skipped, answered payloadTooLarge with the id read from its head."""
    msg_id = units.new_id()
    sent.add(msg_id)
    head = envelope(
        msg_id,
        "session/append",
        b'{"sessionId":"%s","entries":[{"type":"message","message":{"role":"user",'
        b'"content":[{"type":"text","text":"' % SESSION.encode(),
    )
    peer.send(b"Content-Length: %d\r\n\r\n%b" % (LIMIT + 1, head))
    left = LIMIT + 1 - len(head)
    chunk = b"a" * (1 << 20)
    while left:
        peer.send(chunk[:left])
        left -= min(left, len(chunk))
    peer.wait_for([msg_id])
    answer = peer.answers[msg_id]
    assert len(answer) == 1 and answer[0]["error"]["code"] == -33011, answer
    return 1


def reopen_and_compare(root: Path, appended: set[str]) -> None:
    """Nothing stored is lost: a fresh sidecar finds every entry an append was answered for, and a tree."""
    sidecar = start_stdio(root, "lsp")
    try:
        initialize(sidecar.peer, root)
        open_session(sidecar.peer)
        entries = sidecar.peer.call("session/getEntries", {"sessionId": SESSION})["entries"]
        ids = {entry["id"] for entry in entries}
        assert appended <= ids, sorted(appended - ids)[:5]
        assert all(entry.get("parentId") is None or entry["parentId"] in ids for entry in entries)
    finally:
        assert sidecar.stop() == 0


def seed_session(peer: Peer) -> str:
    peer.call("session/create", {"cwd": "/w", "sessionId": SESSION})
    result = peer.call("session/append", {"sessionId": SESSION, "entries": [user("before the junk")]})
    return result["entries"][0]["id"]


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
def test_bytes_over_stdio_every_id_answered_once_nothing_lost(tmp_path: Path, framing: str):
    root = tmp_path / "sessions"
    root.mkdir()
    started = time.monotonic()
    sidecar = start_stdio(root, framing)
    try:
        initialize(sidecar.peer, root)
        first = seed_session(sidecar.peer)
        totals = fuzz(sidecar, framing, FRAMES, SEED)
        appended = appended_ids(sidecar.peer) | {first}
    finally:
        code = sidecar.stop() if sidecar.process.poll() is None else sidecar.process.returncode
    assert code == 0
    reopen_and_compare(root, appended)
    print(f"\nbyte fuzz (stdio, {framing}): {totals}, {len(appended)} entries kept, {time.monotonic() - started:.1f}s")


def test_bytes_over_a_unix_socket_every_id_answered_once_nothing_lost(tmp_path: Path):
    root = tmp_path / "sessions"
    root.mkdir()
    started = time.monotonic()
    sidecar = start_socket(root, tmp_path / "s.sock")
    try:
        initialize(sidecar.peer, root)
        first = seed_session(sidecar.peer)
        totals = fuzz(sidecar, "lsp", FRAMES, SEED)
        appended = appended_ids(sidecar.peer) | {first}
    finally:
        code = sidecar.stop()
    assert code == 0
    reopen_and_compare(root, appended)
    print(f"\nbyte fuzz (unix socket): {totals}, {len(appended)} entries kept, {time.monotonic() - started:.1f}s")
