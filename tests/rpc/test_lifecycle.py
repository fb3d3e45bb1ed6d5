"""initialize / initialized / shutdown / exit / EOF, settings and logging, on a real subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sidecar import wire

from .harness import RawServer, assistant, user


async def test_requests_before_initialize_get_32002_and_initialize_still_works(sessions_root: Path):
    server = await RawServer.start()
    try:
        early = await server.request("session/list", {})
        assert early["error"]["code"] == -32002
        assert early["error"]["data"] == {"kind": "serverNotInitialized", "method": "session/list"}
        server.send({"jsonrpc": "2.0", "method": "initialized"})  # dropped, no answer
        answer = await server.initialize(sessions_root)
        result = answer["result"]
        assert result["serverInfo"]["name"] == "session-sidecar"
        assert result["protocolVersion"] == "1.0"
        caps = result["capabilities"]
        assert set(caps["methods"]) >= {"initialize", "shutdown", *wire.METHODS} - {"session/compact"}
        assert caps["framings"] == ["lsp", "jsonl"]
        assert isinstance(caps["providers"], list)
        assert (await server.request("session/list", {}))["result"] == {"sessions": [], "nextCursor": None}
    finally:
        await server.stop()


async def test_unsupported_protocol_version_and_bad_settings_are_refused(sessions_root: Path):
    server = await RawServer.start()
    try:
        wrong = await server.request("initialize", {"protocolVersion": "2.0"})
        assert wrong["error"]["code"] == -32602 and wrong["error"]["data"]["field"] == "protocolVersion"
        bad = await server.request("initialize", {"settings": {"compaction": {"contextWindow": "big"}}})
        assert bad["error"]["code"] == -32602
        assert "settings.compaction.contextWindow" in bad["error"]["message"]
        nul = await server.request("initialize", {"sessionRoot": str(sessions_root) + "\x00"})
        assert nul["error"]["code"] == -32602 and nul["error"]["data"]["field"] == "sessionRoot"
        still_new = await server.request("session/list", {})
        assert still_new["error"]["code"] == -32002
    finally:
        await server.stop()


async def test_settings_come_from_file_then_environment_then_initialize(sessions_root: Path, tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text("[compaction]\ncontextWindow = 100\nreserveTokens = 10\n[store]\nfsync = 'always'\n")
    env = {**os.environ, "SESSION_SIDECAR_FSYNC": "never", "SESSION_SIDECAR_KEEP_RECENT_TOKENS": "77"}
    server = await RawServer.start("--config", str(config), env=env)
    try:
        answer = await server.initialize(sessions_root, settings={"compaction": {"reserveTokens": 20}})
        settings = answer["result"]["settings"]
        assert settings["store"]["fsync"] == "never"  # environment over file
        assert settings["store"]["compat"] == "pi"  # not oh-my-pi's folder: pi's compatibility
        # clearToolResults: its defaults (a nested section shows as {}, as providers.anthropic does).
        assert settings["compaction"] == {
            "contextWindow": 100,
            "reserveTokens": 20,
            "keepRecentTokens": 77,
            "clearToolResults": {},
        }
        await server.request("session/create", {"cwd": "/w", "sessionId": "s"})
        appended = await server.request("session/append", {"sessionId": "s", "entries": [user("word " * 200)]})
        assert appended["result"]["shouldCompact"] is True  # 100-token window, 20 reserved
    finally:
        await server.stop()


async def test_a_broken_config_file_stops_startup_with_a_message(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text("[compaction]\nbogus = 1\n")
    server = await RawServer.start("--config", str(config))
    assert await server.wait() == 2
    assert b"bogus" in server.stderr and str(config).encode() in server.stderr


async def test_shutdown_then_exit_ends_with_code_0_and_refuses_requests_between(sessions_root: Path):
    server = await RawServer.start()
    await server.initialize(sessions_root)
    assert (await server.request("shutdown"))["result"] is None
    refused = await server.request("session/list", {})
    assert refused["error"]["code"] == -32600 and "shutdown" in refused["error"]["message"]
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert await server.wait() == 0


async def test_exit_without_shutdown_ends_with_code_1(sessions_root: Path):
    server = await RawServer.start()
    await server.initialize(sessions_root)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert await server.wait() == 1


async def test_eof_answers_requests_in_flight_writes_them_and_exits_0(sessions_root: Path):
    server = await RawServer.start()
    await server.initialize(sessions_root, settings={"store": {"fsync": "never"}})
    created = (await server.request("session/create", {"cwd": "/w", "sessionId": "eof"}))["result"]
    await server.request("session/append", {"sessionId": "eof", "entries": [user("hi"), assistant("hello")]})
    for index in range(20):  # pipelined, then stdin closes at once
        server.send(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "session/append",
                "params": {"sessionId": "eof", "entries": [user(f"m{index}")]},
            }
        )
    await server.close_stdin()
    answers = [await server.response() for _ in range(20)]
    assert sorted(a["id"] for a in answers) == list(range(20)) and all("result" in a for a in answers)
    assert await server.wait() == 0
    written = Path(created["path"]).read_text().splitlines()
    assert len(written) == 1 + 2 + 20 and json.loads(written[-1])["message"]["content"][0]["text"] == "m19"


async def test_a_server_logging_a_lot_to_stderr_keeps_stdout_clean(sessions_root: Path):
    server = await RawServer.start("--log-level", "debug")
    await server.initialize(sessions_root)
    await server.request("session/create", {"cwd": "/w", "sessionId": "loud"})
    for index in range(150):
        server.send({"jsonrpc": "2.0", "id": index, "method": "session/getTree", "params": {"sessionId": "loud"}})
        server.send({"jsonrpc": "2.0", "id": f"bad{index}", "method": "no/such"})  # warnings too
    answers = [await server.response() for _ in range(300)]
    assert sum("result" in a for a in answers) == 150 and sum("error" in a for a in answers) == 150
    await server.close_stdin()
    assert await server.wait() == 0
    assert len(server.stderr) > 20_000 and b"DEBUG" in server.stderr


async def test_stray_prints_go_to_stderr_not_into_the_protocol(sessions_root: Path):
    # Any library writing to fd 1 must not corrupt frames: the server moved stdout aside.
    server = await RawServer.start()
    await server.initialize(sessions_root)
    assert (await server.request("session/list", {}))["result"]["sessions"] == []
    await server.close_stdin()
    assert await server.wait() == 0
