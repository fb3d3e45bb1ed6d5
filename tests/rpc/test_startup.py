"""Start-up: what a serving sidecar imports, and when (no timings; bench/startup.py has those).

``sidecar.rpc.boot`` answers the first ``initialize`` before the compaction
engine is imported, then hands over to the server; pygls and lsprotocol's
types (~250 ms) are never imported.
These tests run real ``serve`` processes with an audit hook that reports
imports on the same pipe as the protocol's output, so the order of the two is
exact. Every other first message must get the answer the server gives.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from store_mode import ON_POSTGRES

from .harness import REPO_ROOT, TIMEOUT, RawServer, frame, user

# Runs ``session-sidecar`` with an audit hook: "@@import NAME" on stderr when a
# module of WATCHED (or below one) is first imported, and every module's name at the end.
WRAPPER = r"""
import json, os, sys
WATCHED = set(sys.argv[1].split(","))
def hook(event, args):
    if event == "import" and any(args[0] == name or args[0].startswith(name + ".") for name in WATCHED):
        os.write(2, b"@@import " + args[0].encode() + b"\n")
sys.addaudithook(hook)
from sidecar.cli import main
code = main(sys.argv[2:])
os.write(2, b"@@modules " + json.dumps(sorted(sys.modules)).encode() + b"\n")
raise SystemExit(code)
"""
# Not needed to answer initialize: pygls and what it brings (never imported), and the compaction engine.
HEAVY = ("pygls", "lsprotocol", "cattrs", "attrs", "attr", "sidecar.compaction")
PROVIDER_SDKS = ("anthropic", "httpx", "httpx2", "openai", "sidecar.providers.anthropic", "sidecar.providers.openai")


def run_wrapped(
    messages: list[dict], *args: str, framing: str = "lsp", watched: tuple[str, ...] = HEAVY
) -> tuple[int, bytes]:
    """Serve ``messages`` (all written at once, then end of input); exit code and stdout+stderr as one stream."""
    data = b"".join(frame(message, framing) for message in messages)
    argv = [sys.executable, "-c", WRAPPER, ",".join(watched), "serve", *args]
    if framing == "jsonl":
        argv.append("--jsonl")
    done = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO_ROOT, timeout=60)
    return done.returncode, done.stdout


def modules_at_exit(output: bytes) -> set[str]:
    line = output.split(b"@@modules ", 1)[1].split(b"\n", 1)[0]
    return set(json.loads(line))


def initialize(root: Path, msg_id: int = 1, **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": {"sessionRoot": str(root), **params}}


def request(msg_id: int, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


SHUTDOWN_EXIT = [{"jsonrpc": "2.0", "id": 99, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
def test_initialize_is_answered_before_pygls_or_compaction_is_imported(sessions_root: Path, framing: str):
    messages = [initialize(sessions_root), request(2, "session/list"), *SHUTDOWN_EXIT]
    code, output = run_wrapped(messages, framing=framing)
    assert code == 0, output.decode(errors="replace")
    answered = output.index(b'"id":1,"result"')
    imported = output.find(b"@@import ")
    assert imported == -1 or answered < imported, output[:imported].decode(errors="replace")
    assert b'"id":2,"result":{"sessions":[]' in output
    assert b'"id":99,"result":null' in output


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
def test_a_session_served_end_to_end_never_imports_pygls_or_lsprotocol(sessions_root: Path, framing: str):
    # The server stands on its own JSON-RPC endpoint (sidecar/rpc/endpoint.py): the ~250 ms
    # of lsprotocol's types are not paid by any call, the first one included.
    messages = [
        initialize(sessions_root),
        request(2, "session/create", {"cwd": "/w", "sessionId": "s1"}),
        request(3, "session/append", {"sessionId": "s1", "entries": [user("hello")]}),
        request(4, "session/buildContext", {"sessionId": "s1"}),
        request(5, "session/list", {}),
        *SHUTDOWN_EXIT,
    ]
    code, output = run_wrapped(messages, framing=framing)
    assert code == 0, output.decode(errors="replace")
    for msg_id in (2, 3, 4, 5):
        assert b'"id":%d,"result"' % msg_id in output, output.decode(errors="replace")
    assert b'"text":"hello"' in output
    loaded = modules_at_exit(output)
    assert not {name for name in loaded if name.split(".")[0] in ("pygls", "lsprotocol", "cattrs", "attrs", "attr")}
    assert not NOT_AT_START_UP & loaded  # (exports, and a file root never needs the database driver)


# Loaded only when used: the export's renderers and redaction rules, and the PostgreSQL driver
# (importing psycopg took 75 ms of every start, a file root's included, while the migrate
# command's parser imported it; the export package's renderers 10-15 ms).
NOT_AT_START_UP = {"sidecar.export.exporting", "sidecar.export.html", "sidecar.export.redact"} | (
    set() if ON_POSTGRES else {"psycopg", "psycopg_binary", "sidecar.store.postgres.db"}
)


def test_a_one_shot_call_loads_neither_the_export_nor_the_database_driver(sessions_root: Path):
    argv = [
        sys.executable,
        "-c",
        WRAPPER,
        "sidecar.export.exporting",
        "call",
        "session/list",
        "--root",
        str(sessions_root),
    ]
    done = subprocess.run(argv, capture_output=True, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert json.loads(done.stdout)["sessions"] == []
    assert not NOT_AT_START_UP & modules_at_exit(done.stderr)


# The engines a serving sidecar loads when a method first asks for one (issue 42), never to answer
# initialize and a first session/list: each a module (or a package, with all below it).
ENGINES_NOT_AT_START_UP = (
    "sidecar.compaction",
    "sidecar.providers.anthropic",
    "sidecar.providers.openai",
    "sidecar.importers.run",
    "sidecar.importers.common",
    "sidecar.importers.codex",
    "sidecar.importers.claude_code",
    "sidecar.importers.opencode",
    "sidecar.export.exporting",
    "sidecar.export.html",
    "sidecar.export.redact",
    "sidecar.snapshots.engine",
    "sidecar.live.bus",
    "sidecar.live.events",
    "sidecar.history.store",
    "sidecar.upkeep.retention",
    "sidecar.upkeep.report",
    "sidecar.context",
    "sidecar.external",
    "sidecar.operations.appending",
    "sidecar.operations.context",
    "sidecar.operations.convert",
    "sidecar.operations.upkeep",
    "sidecar.store.spec",
    "sidecar.store.postgres.db",
    "sidecar.rpc.sockets",
    "psycopg",
    "httpx",
    "anthropic",
    "openai",
    "tomllib",  # read only when there is a config file
    # The other commands' parsers (cli._parse: serve is parsed by its own), and what they import.
    "sidecar.snapshots.cli",
    "sidecar.importers.command",
    "sidecar.export.cli",
    "sidecar.store.postgres.command",
    "webbrowser",
    "sidecar.providers.base",  # (initialize names the providers; none is made)
    # The session handle and what makes one (files/store.py imports them where a session is made or
    # loaded): a listing reads the index's rows and the held sessions, of which there are none yet.
    "sidecar.store.session",
    "sidecar.store.tree",
    "sidecar.store.appending",
    "sidecar.store.batch",
    "sidecar.store.encoded",
    "sidecar.store.usage",
    "sidecar.format.entries",
    "sidecar.wire.entries",
    "sidecar.store.files.session",
    "sidecar.store.files.cache",
    "sidecar.store.files.treecache",
    "sidecar.store.files.writer",
    "sidecar.store.files.follow",
    "sidecar.store.files.titles",
    "sidecar.store.files.moves",
    # OpenSSL's hashes (an image's blob, a foreign session's id) and secrets (a new session's id reads
    # os.urandom, which is what secrets.token_bytes returns).
    "hashlib",
    "secrets",
)


def _loaded_engines(loaded: set[str]) -> list[str]:
    return sorted(
        name for name in loaded if any(name == e or name.startswith(e + ".") for e in ENGINES_NOT_AT_START_UP)
    )


@pytest.mark.skipif(ON_POSTGRES, reason="a PostgreSQL store loads its driver to list")
@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
def test_initialize_and_a_first_list_load_no_engine(sessions_root: Path, framing: str):
    """Spawn to the first answered session/list imports the store, the listing and the server alone."""
    messages = [initialize(sessions_root), request(2, "session/list"), *SHUTDOWN_EXIT]
    code, output = run_wrapped(messages, framing=framing)
    assert code == 0, output.decode(errors="replace")
    assert b'"id":2,"result":{"sessions":[]' in output
    loaded = modules_at_exit(output)
    assert "sidecar.store.files.store" in loaded and "sidecar.rpc.server" in loaded  # (the check sees the modules)
    assert _loaded_engines(loaded) == []


def test_the_engine_a_method_asks_for_is_loaded_then(sessions_root: Path):
    """The other side of the rule above: the engines are loaded lazily, not left out (a watched
    session's append loads the live hooks and the append operation; a snapshot the snapshot engine)."""
    messages = [
        initialize(sessions_root),
        request(2, "session/create", {"cwd": "/w", "sessionId": "s", "watch": True}),
        request(3, "session/append", {"sessionId": "s", "entries": [user("hello")]}),
        request(4, "session/getTree", {"sessionId": "s"}),
        request(5, "history/list", {}),
        *SHUTDOWN_EXIT,
    ]
    code, output = run_wrapped(messages)
    assert code == 0, output.decode(errors="replace")
    for msg_id in (2, 3, 4, 5):
        assert b'"id":%d,"result"' % msg_id in output, output.decode(errors="replace")
    loaded = _loaded_engines(modules_at_exit(output))
    assert {"sidecar.external", "sidecar.operations.appending", "sidecar.history.store"} <= set(loaded)
    assert {"sidecar.store.session", "sidecar.format.entries"} <= set(loaded)  # (the create's and the append's)


@pytest.mark.skipif(ON_POSTGRES, reason="opens a pi file by its path in the sessions root")
def test_opening_a_session_loads_no_append_check(sessions_root: Path):
    """An open (of a file, the first request of fresh.py's figure) reads the format's version and known types
    (format/version.py), not the shapes an append is checked against (format/entries.py, wire/entries.py:
    ~8 ms of type building), nor secrets (an open makes no id); the first append loads them (the test above)."""
    folder = sessions_root / "--work--"
    folder.mkdir(parents=True)
    path = folder / "current.jsonl"  # (a file of the current version: an older one is migrated, which makes ids)
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work"},
        {**user("hi"), "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    messages = [initialize(sessions_root), request(2, "session/open", {"path": str(path)}), *SHUTDOWN_EXIT]
    code, output = run_wrapped(messages)
    assert code == 0, output.decode(errors="replace")
    assert b'"id":2,"result":{"sessionId":' in output, output.decode(errors="replace")
    loaded = modules_at_exit(output)
    assert "sidecar.store.session" in loaded and "sidecar.store.files.session" in loaded  # (the check sees them)
    assert not {"sidecar.format.entries", "sidecar.wire.entries", "secrets"} & loaded


async def _first_answers(first: list[dict], root: Path) -> list[dict]:
    server = await RawServer.start()
    try:
        answers = []
        for message in first:
            answers.append(await server.request(message["method"], message.get("params"), msg_id=message["id"]))
        return answers
    finally:
        await server.stop()


async def test_the_early_answer_is_the_answer_the_server_gives(sessions_root: Path):
    settings = {"compaction": {"contextWindow": 50_000}}
    early = await _first_answers([initialize(sessions_root, 7, settings=settings)], sessions_root)
    # A request first: the server answers it, and then initialize too.
    late = await _first_answers(
        [request(1, "session/list"), initialize(sessions_root, 7, settings=settings)], sessions_root
    )
    assert late[0]["error"]["code"] == -32002
    assert early[0] == late[1]
    assert early[0]["result"]["settings"]["compaction"]["contextWindow"] == 50_000


@pytest.mark.parametrize(
    "first, code",
    [
        pytest.param(b"{not json", -32700, id="bad-json"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "initialize"}, -32600, id="boolean-id"),
        pytest.param({"jsonrpc": "1.0", "id": 1, "method": "initialize"}, -32600, id="wrong-jsonrpc"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]}, -32602, id="array-params"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "9.0"}},
            -32602,
            id="version",
        ),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "session/list"}, -32002, id="not-initialize"),
    ],
)
async def test_a_first_message_boot_does_not_answer_gets_the_servers_answer(sessions_root: Path, first, code: int):
    server = await RawServer.start()
    try:
        server.send_raw(
            b"Content-Length: %d\r\n\r\n%b" % (len(first), first) if isinstance(first, bytes) else frame(first)
        )
        answer = await server.response()
        assert answer["error"]["code"] == code, answer
        initialized = await server.initialize(sessions_root)
        assert initialized["result"]["sessionRoot"] == str(sessions_root)
        assert (await server.request("session/list", {}))["result"]["sessions"] == []
        await server.request("shutdown")
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 0
    finally:
        await server.stop()


async def test_after_the_early_answer_the_server_knows_initialize_was_received(sessions_root: Path):
    server = await RawServer.start()
    try:
        assert "result" in await server.initialize(sessions_root)
        again = await server.request("initialize", {"sessionRoot": str(sessions_root)})
        assert again["error"]["code"] == -32600 and "already received" in again["error"]["message"]
        created = await server.request("session/create", {"cwd": "/w", "sessionId": "early"})
        # The service the early initialize made: its sessions' places (a file below its root, or pg:).
        assert created["result"]["path"].startswith("pg:" if ON_POSTGRES else str(sessions_root))
    finally:
        await server.stop()


async def test_a_notification_first_is_left_to_the_server(sessions_root: Path):
    server = await RawServer.start()
    try:
        server.send({"jsonrpc": "2.0", "method": "initialized"})  # before initialize: dropped, no answer
        answer = await server.initialize(sessions_root)
        assert "result" in answer
    finally:
        await server.stop()


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
async def test_end_of_input_first_exits_0_without_output(framing: str):
    server = await RawServer.start(framing=framing)
    try:
        await server.close_stdin()
        assert await server.wait() == 0
        assert await asyncio.wait_for(server.process.stdout.read(), TIMEOUT) == b""  # type: ignore[union-attr]
    finally:
        await server.stop()


COMPACT_SMALL = {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300}


def test_serving_and_compacting_offline_never_imports_a_provider_sdk(sessions_root: Path):
    entries = [user(f"question {n} " + "word " * 150) for n in range(12)]
    messages = [
        initialize(sessions_root, settings={"providers": {"default": "offline"}, "compaction": COMPACT_SMALL}),
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        request(2, "session/create", {"cwd": "/w", "sessionId": "s"}),
        request(3, "session/append", {"sessionId": "s", "entries": entries}),
        request(4, "session/buildContext", {"sessionId": "s"}),
        request(5, "session/list"),
        request(6, "session/compact", {"sessionId": "s"}),
        *SHUTDOWN_EXIT,
    ]
    code, output = run_wrapped(messages, watched=PROVIDER_SDKS)
    assert code == 0, output.decode(errors="replace")
    for msg_id in (2, 3, 4, 5, 6):
        assert b'"id":%d,"result"' % msg_id in output, output.decode(errors="replace")
    assert b"@@import " not in output
    loaded = modules_at_exit(output)
    assert not loaded & set(PROVIDER_SDKS)
    assert b'"provider":"offline"' in output  # the compaction did run a provider


def test_start_up_is_frozen_for_the_collector_once_the_server_serves(sessions_root: Path):
    """boot.serve in this process: after the first answers, what start-up made is frozen and gc is on."""
    import gc
    import os
    import threading

    from sidecar.rpc import boot

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(boot.serve(sessions_root, stdin=stdin, stdout_fd=out_write)))
    enabled = gc.isenabled()
    frozen_before = gc.get_freeze_count()
    thread.start()
    try:
        os.write(in_write, frame(initialize(sessions_root)) + frame(request(2, "session/list")))
        output = b""
        while b'"id":2,' not in output:
            chunk = os.read(out_read, 65536)
            assert chunk, "the server closed its output"
            output += chunk
        assert b'"id":2,"result"' in output
        assert gc.get_freeze_count() > frozen_before
        assert gc.isenabled() == enabled
        os.write(in_write, b"".join(frame(message) for message in SHUTDOWN_EXIT))
        thread.join(TIMEOUT)
        assert codes == [0]
    finally:
        os.close(in_write)
        thread.join(TIMEOUT)
        stdin.close()
        os.close(out_read)
        os.close(out_write)
        gc.unfreeze()
