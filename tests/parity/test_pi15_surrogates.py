"""Lone surrogates as JavaScript makes them, end to end (issue 36, item 2).

An agent cuts a string inside an emoji ("😀".slice(0, 1)); Node's JSON.stringify writes the lone half
as the escape "\\ud83d", and pi 1.5.2 writes such strings into its session files the same way. Here
Node itself makes the strings and the requests that carry them (cut_strings.mjs), sent byte for byte
to a real sidecar; pi's own SessionManager under Node 22 (pi15/pi_session.mjs) writes a file holding
them, which goes through every method over the wire; what we write is compared with what pi writes
for the same entries (pi reads our file and gives each entry as JSON.stringify writes it), and pi must
read our file back with the same strings. On the PostgreSQL pass (SIDECAR_TEST_STORE=postgres) the
same runs on that store, the files brought in and read back through tests/store_mode.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from rpc.harness import RawServer
from store_mode import bring_in, pi_file, place
from test_pi15_parity import ensure_pi15_installed, run_pi15

CUT_SCRIPT = Path(__file__).resolve().parent / "cut_strings.mjs"
SETTINGS = {
    "compaction": {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300},
    "providers": {"default": "offline"},
}
HIGH, LOW = "\ud83d", "\ude00"


def node_requests(requests: list[dict]) -> tuple[dict[str, str], list[bytes]]:
    """The cut strings Node makes (as Python reads their JSON) and each request as Node's JSON.stringify wrote it."""
    node = ensure_pi15_installed()
    done = subprocess.run(
        [str(node), str(CUT_SCRIPT)],
        input=json.dumps({"requests": requests}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    made = json.loads(done.stdout)
    return {name: json.loads(text) for name, text in made["cuts"].items()}, [line.encode() for line in made["lines"]]


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


async def send_all(server: RawServer, bodies: list[bytes]) -> list[dict]:
    """Each body sent as it is; the answers, one per request, by id (the order they were sent in)."""
    for body in bodies:
        server.send_raw(frame(body))
    answers = {}
    while len(answers) < len(bodies):
        answer = await server.response()
        assert answer["id"] not in answers, f"two answers for id {answer['id']}"
        answers[answer["id"]] = answer
    ids = [json.loads(body)["id"] for body in bodies]
    return [answers[i] for i in ids]


def result(answer: dict) -> Any:
    assert "result" in answer, answer
    return answer["result"]


async def start(root: Path) -> RawServer:
    server = await RawServer.start()
    result(await server.initialize(root, settings=SETTINGS))
    return server


def text_of(content: Any) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def request(msg_id: int, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def turn(n: int) -> list[dict]:
    """A tool-using turn whose every string holds a cut emoji (and enough words to compact)."""
    words = " word" * 120
    return [
        {"type": "message", "message": {"role": "user", "content": f"q{n} <cut:cutEnd>{words}", "timestamp": n}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "<cut:reversed> think"},
                    {"type": "text", "text": f"a{n} <cut:high>{words}"},
                    {
                        "type": "toolCall",
                        "id": f"call{n}",
                        "name": "read",
                        "arguments": {"path": "<cut:cutStart>", "<cut:low>": "<cut:rejoined>"},
                    },
                ],
                "api": "x",
                "provider": "p",
                "model": "m",
                "stopReason": "toolUse",
                "timestamp": n,
                "usage": {
                    "input": 1,
                    "output": 1,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 2,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": f"call{n}",
                "toolName": "read",
                "isError": False,
                "timestamp": n,
                "content": [{"type": "text", "text": f"out{n} <cut:cutEnd>{words}"}],
            },
        },
    ]


async def test_requests_node_writes_with_cut_emoji_are_served_and_kept(sessions_root: Path, tmp_path: Path):
    cuts, bodies = node_requests(
        [
            request(1, "session/create", {"cwd": "/work/cut", "sessionId": "cut"}),
            request(2, "session/append", {"sessionId": "cut", "entries": turn(1) + turn(2)}),
            request(3, "session/setName", {"sessionId": "cut", "name": "name <cut:high>"}),
            request(4, "history/add", {"prompt": "prompt <cut:cutEnd>", "cwd": "/work/cut"}),
            request(5, "session/getEntries", {"sessionId": "cut"}),
            request(7, "session/buildContext", {"sessionId": "cut", "format": "llm"}),
        ]
    )
    assert cuts["high"] == HIGH and cuts["low"] == LOW and cuts["reversed"] == LOW + HIGH
    assert cuts["cutEnd"] == "tool output 😀" + HIGH and cuts["rejoined"] == "😀"
    assert b'"q1 tool output \xf0\x9f\x98\x80\\ud83d word' in bodies[1]  # Node's bytes: the escape, lowercase
    server = await start(sessions_root)
    try:
        answers = await send_all(server, bodies)
        for answer in answers:
            result(answer)  # every one served (before: -32700 with id null for each)
        entries = [e for e in result(answers[4])["entries"] if e["type"] == "message"]
        assert entries[0]["message"]["content"].startswith("q1 " + cuts["cutEnd"] + " word")
        blocks = entries[1]["message"]["content"]
        assert blocks[0]["thinking"] == cuts["reversed"] + " think"
        assert blocks[1]["text"].startswith("a1 " + HIGH)
        assert blocks[2]["arguments"] == {"path": cuts["cutStart"], LOW: "😀"}
        assert [e["name"] for e in result(answers[4])["entries"] if e["type"] == "session_info"] == ["name " + HIGH]
        llm = result(answers[5])["messages"]
        assert text_of(llm[0]["content"]).startswith("q1 " + cuts["cutEnd"])
        # (asked once the appends are answered: a list pipelined right behind an append does not find its
        # texts yet, with or without surrogates)
        found = result(await server.request("history/search", {"query": HIGH, "cwd": "/work/cut"}))["entries"]
        assert [p["prompt"] for p in found] == ["prompt " + cuts["cutEnd"]]
        listed = result(await server.request("session/list", {"all": True, "query": "q1 tool"}))["sessions"]
        assert [s["sessionId"] for s in listed] == ["cut"]
        # The listing's texts (name, firstMessage, snippet) read a lone surrogate as U+FFFD (PROTOCOL.md, Strings).
        assert listed[0]["name"] == "name \ufffd" and listed[0]["firstMessage"].startswith("q1 tool output 😀\ufffd")
        assert listed[0]["snippet"].startswith("**q1 tool**")
        path = result(answers[0])["path"]
        result(await server.request("session/flush", {"sessionId": "cut"}))
    finally:
        await server.stop()
    # The file holds the escapes as Node wrote them, and pi reads it back with the same strings.
    written = pi_file(path, tmp_path / "exported")
    data = written.read_bytes()
    assert b"q1 tool output \xf0\x9f\x98\x80\\ud83d word" in data and b'"\\ude00\\ud83d think"' in data
    assert b'"\\ude00":"\xf0\x9f\x98\x80"' in data  # a key holding a lone half; a rejoined pair is the emoji
    pi = run_pi15({"read": [{"path": str(written), "leaves": []}]})["results"][0]
    assert pi["ok"], pi.get("error")
    assert our_lines(written) == pi["lines"]  # byte for byte what pi's JSON.stringify writes of each entry
    assert pi["name"] == "name " + HIGH
    assert pi["entries"][0]["message"]["content"].startswith("q1 " + cuts["cutEnd"])


def our_lines(path: Path) -> list[str]:
    """The entry lines of a file (after its header), as text, the escapes as they are."""
    return [line for line in path.read_bytes().decode("utf-8").split("\n")[1:] if line]


PI_TEXT = {"cutEnd": "tool output 😀" + HIGH, "cutStart": LOW + " tail", "reversed": LOW + HIGH}


def pi_ops() -> list[list]:
    """pi's SessionManager ops whose strings hold lone surrogates (Python's json writes them as escapes,
    which Node's JSON.parse reads back into JavaScript strings holding the lone halves)."""
    words = " word" * 120
    ops: list[list] = [["session_info", f"pi name {HIGH}"]]
    for n in range(4):
        ops += [
            ["message", {"role": "user", "content": f"pi q{n} {PI_TEXT['cutEnd']}{words}", "timestamp": n}],
            [
                "message",
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": PI_TEXT["reversed"]},
                        {"type": "text", "text": f"pi a{n} {HIGH}{words}"},
                        {"type": "toolCall", "id": f"c{n}", "name": "read", "arguments": {"path": PI_TEXT["cutStart"]}},
                    ],
                    "api": "x",
                    "provider": "p",
                    "model": "m",
                    "stopReason": "toolUse",
                    "timestamp": n,
                    "usage": {
                        "input": 1,
                        "output": 1,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 2,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                },
            ],
            [
                "message",
                {
                    "role": "toolResult",
                    "toolCallId": f"c{n}",
                    "toolName": "read",
                    "isError": False,
                    "timestamp": n,
                    "content": [{"type": "text", "text": f"pi out{n} {LOW}{words}"}],
                },
            ],
        ]
    ops += [["label", 1, f"label {LOW}"], ["custom", "mine", {"k": HIGH, HIGH: [LOW]}]]
    return ops


async def test_a_file_pi_writes_with_lone_surrogates_goes_through_every_method(sessions_root: Path, tmp_path: Path):
    pi_dir = tmp_path / "pi"
    made = run_pi15({"write": [{"dir": str(pi_dir), "cwd": "/work/pi-cut", "ops": pi_ops()}]})["written"][0]
    assert made["persisted"] and not made["errors"], made
    pi_path = Path(made["path"])
    pi_bytes = pi_path.read_bytes()
    assert b"\\ud83d" in pi_bytes and b"\\ude00\\ud83d" in pi_bytes  # pi wrote the escapes
    # Into our root as a user would put it (on PostgreSQL: migrated in).
    folder = sessions_root / "--work-pi-cut--"
    folder.mkdir()
    ours = folder / pi_path.name
    ours.write_bytes(pi_bytes)
    bring_in(sessions_root)
    pi_view = run_pi15({"read": [{"path": str(pi_path), "leaves": []}]})["results"][0]
    assert pi_view["ok"], pi_view.get("error")
    server = await start(sessions_root)
    try:
        opened = result(await server.request("session/open", {"path": place(sessions_root, ours)}))
        sid = opened["sessionId"]
        assert opened["parseErrors"] == 0 and opened["entryCount"] == len(pi_view["entries"])
        assert opened["leafId"] == pi_view["leafId"]
        agent = result(await server.request("session/buildContext", {"sessionId": sid, "format": "agent"}))
        llm = result(await server.request("session/buildContext", {"sessionId": sid, "format": "llm"}))
        assert agent["messages"] == pi_view["contexts"]["@leaf"]["messages"]
        assert llm["messages"] == pi_view["contexts"]["@leaf"]["llm"]
        entries = result(await server.request("session/getEntries", {"sessionId": sid}))["entries"]
        assert entries == pi_view["entries"]
        tree = result(await server.request("session/getTree", {"sessionId": sid}))
        assert {n["label"] for n in tree["nodes"] if n.get("label")} == {f"label {LOW}"}
        listed = result(await server.request("session/list", {"all": True, "query": "pi q2 tool"}))["sessions"]
        assert [s["sessionId"] for s in listed] == [sid]
        assert listed[0]["name"] == "pi name \ufffd" and "**pi q2 tool** output 😀\ufffd" in listed[0]["snippet"]
        assert listed[0]["firstMessage"].startswith("pi q0 tool output 😀\ufffd")
        # Export: JSON keeps the escapes as JSON.stringify writes them; markdown and HTML hold the strings.
        exported = {
            fmt: result(await server.request("session/export", {"sessionId": sid, "format": fmt, "redact": False}))
            for fmt in ("json", "markdown", "html")
        }
        assert "pi q0 tool output 😀\\ud83d word" in exported["json"]["text"]
        document = json.loads(exported["json"]["text"])
        assert PI_TEXT["cutEnd"] in json.dumps(document, ensure_ascii=False)
        assert PI_TEXT["cutEnd"] in exported["markdown"]["text"]
        assert "pi q0 tool output 😀\\ud83d word" in exported["html"]["text"]  # the page's data, as JSON text
        to_file = tmp_path / "export.md"
        result(await server.request("session/export", {"sessionId": sid, "format": "markdown", "path": str(to_file)}))
        assert "pi q0 tool output 😀\ufffd word" in to_file.read_text(encoding="utf-8")  # as Node writes such text
        # Fork at the last user message, compact (offline), then append what Node cut.
        last_user = [e["id"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"][-1]
        forked = result(await server.request("session/fork", {"sessionId": sid, "entryId": last_user}))
        fork_agent = result(await server.request("session/buildContext", {"sessionId": forked["sessionId"]}))
        assert fork_agent["messages"][0]["content"].startswith("pi q0 " + PI_TEXT["cutEnd"])
        compacted = result(await server.request("session/compact", {"sessionId": sid}))
        assert compacted["entryId"] and compacted["provider"] == "offline"
        assert HIGH in compacted["summary"] or LOW in compacted["summary"]  # the offline summary quotes the texts
        after = result(await server.request("session/buildContext", {"sessionId": sid, "format": "agent"}))
        assert after["messages"][0]["role"] == "compactionSummary"
        result(await server.request("session/subscribe", {"sessionId": sid}))
        _, bodies = node_requests([request(90, "session/append", {"sessionId": sid, "entries": turn(9)})])
        appended = (await send_all(server, bodies))[0]
        result(appended)
        while not any(n["method"] == "session/didAppend" for n in server.notifications):
            server.notifications.append(await server.receive())
        event = next(n for n in server.notifications if n["method"] == "session/didAppend")
        assert text_of(event["params"]["entries"][0]["message"]["content"]).startswith("q9 tool output 😀" + HIGH)
        final = result(await server.request("session/buildContext", {"sessionId": sid, "format": "llm"}))
        assert final["messages"][-1]["content"][0]["text"].startswith("out9 tool output 😀" + HIGH)
        result(await server.request("session/close", {"sessionId": sid}))
        result(await server.request("session/close", {"sessionId": forked["sessionId"]}))
        fork_location = forked["path"]
    finally:
        await server.stop()
    # pi reads what we wrote (the grown file and the fork) back with the same strings, and writes each
    # entry exactly as our line holds it.
    scratch = tmp_path / "exported"
    grown, fork = pi_file(place(sessions_root, ours), scratch), pi_file(fork_location, scratch)
    assert grown.read_bytes().startswith(pi_bytes)  # pi's lines kept byte for byte; ours after them
    back = run_pi15({"read": [{"path": str(grown), "leaves": []}, {"path": str(fork), "leaves": []}]})["results"]
    for view, path in zip(back, (grown, fork)):
        assert view["ok"], view.get("error")
        assert our_lines(path) == view["lines"], f"{path}: a line is not what pi's JSON.stringify writes"
    assert back[0]["entries"][: len(pi_view["entries"])] == pi_view["entries"]
    assert back[0]["entries"][-1]["message"]["content"][0]["text"].startswith("out9 tool output 😀" + HIGH)
    assert any(e["type"] == "compaction" for e in back[0]["entries"])
    assert back[1]["contexts"]["@leaf"]["messages"][0]["content"].startswith("pi q0 " + PI_TEXT["cutEnd"])


async def test_imported_lines_holding_lone_surrogate_escapes_are_kept(sessions_root: Path, tmp_path: Path):
    """Codex and Claude Code rollouts written by Node tools hold the same escapes: an import keeps them."""
    import tarfile

    fixtures = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
    found = {}
    for tool, archive, glob in (
        ("codex", "codex.tar.xz", ".codex/sessions/**/*.jsonl"),
        ("claude-code", "claude-code.tar.xz", ".claude/projects/*/*.jsonl"),
    ):
        into = tmp_path / tool
        with tarfile.open(fixtures / archive) as packed:
            packed.extractall(into, filter="data")
        paths = sorted(into.glob(glob))
        data = paths[0].read_bytes()
        assert b"[[TOOL]] Create a note file." in data
        # The user's prompt, cut inside an emoji, as JSON.stringify writes it in the tool's own line.
        paths[0].write_bytes(data.replace(b"[[TOOL]] Create a note file.", b"[[TOOL]] Create a note file. \\ud83d"))
        found[tool] = paths[0]
    server = await start(sessions_root)
    try:
        for tool, path in found.items():
            imported = result(await server.request("session/import", {"tool": tool, "paths": [str(path)]}))
            made = imported["sessions"][0]
            assert not made.get("damaged"), made  # (before: each line holding one was damaged)
            opened = result(await server.request("session/open", {"sessionId": made["sessionId"]}))
            for fmt in ("agent", "llm"):  # (the Codex rollout's leaf is after a compaction)
                result(await server.request("session/buildContext", {"sessionId": opened["sessionId"], "format": fmt}))
            entries = result(await server.request("session/getEntries", {"sessionId": opened["sessionId"]}))["entries"]
            users = [
                text_of(e["message"]["content"])
                for e in entries
                if e["type"] == "message" and e["message"]["role"] == "user"
            ]
            assert "[[TOOL]] Create a note file. " + HIGH in users, (tool, users)
            result(await server.request("session/close", {"sessionId": opened["sessionId"]}))
            written = pi_file(made["path"], tmp_path / f"exported-{tool}")
            assert b"[[TOOL]] Create a note file. \\ud83d" in written.read_bytes()
            assert b"\xf4\x8f\xbf\xbf" not in written.read_bytes()  # no stand-in left
            pi = run_pi15({"read": [{"path": str(written), "leaves": []}]})["results"][0]
            assert pi["ok"], pi.get("error")
            assert our_lines(written) == pi["lines"], f"{tool}: a line is not what pi's JSON.stringify writes"
    finally:
        await server.stop()
