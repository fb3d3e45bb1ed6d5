"""Starting and ending: the default command on PATH, attached streams, polite close, killing a wedged sidecar, a dying one."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import (
    ConnectionClosed,
    InvalidParamsError,
    ProtocolVersionError,
    SidecarClient,
    SummarizeParams,
    SummarizeResult,
)

from .entries import turns
from .paths import sidecar_command


def put_sidecar_on_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``session-sidecar`` launcher for the sidecar under test, alone on PATH."""
    folder.mkdir()
    launcher = folder / "session-sidecar"
    launcher.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in sidecar_command()) + ' "$@"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("SESSION_SIDECAR_BIN", raising=False)  # else it would be used, not PATH
    return launcher


async def test_by_default_session_sidecar_is_found_on_path(
    tmp_path: Path, sessions_root: Path, monkeypatch: pytest.MonkeyPatch
):
    launcher = put_sidecar_on_path(tmp_path / "bin", monkeypatch)
    async with SidecarClient.spawn(session_root=sessions_root) as client:
        assert client.process is not None
        assert (
            client.initialize_result is not None and client.initialize_result["serverInfo"]["name"] == "session-sidecar"
        )
        assert (await client.create("/w", session_id="on-path"))["sessionId"] == "on-path"
    assert client.returncode == 0
    assert launcher.exists()


async def test_sidecar_bin_names_the_default_command(
    tmp_path: Path, sessions_root: Path, monkeypatch: pytest.MonkeyPatch
):
    launcher = put_sidecar_on_path(tmp_path / "bin", monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # not found on PATH: only the variable names it
    monkeypatch.setenv("SESSION_SIDECAR_BIN", str(launcher))
    async with SidecarClient.spawn(session_root=sessions_root) as client:
        assert (await client.list())["sessions"] == []


async def test_no_sidecar_on_path_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SESSION_SIDECAR_BIN", raising=False)
    with pytest.raises(FileNotFoundError, match="session-sidecar is not on PATH"):
        await SidecarClient.spawn()


async def test_root_and_args_reach_the_command_line(command: list[str], sessions_root: Path):
    # --root instead of initialize's sessionRoot, jsonl framing, and extra arguments.
    async with SidecarClient.spawn(
        ["--log-level", "error"], command=command, root=sessions_root, framing="jsonl"
    ) as client:
        assert client.initialize_result is not None and client.initialize_result["sessionRoot"] == str(sessions_root)
        created = await client.create("/w")
        assert created["path"].startswith(str(sessions_root))


async def test_attach_to_streams(command: list[str], sessions_root: Path):
    process = await asyncio.create_subprocess_exec(
        *command, "serve", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None and process.stdin is not None
    async with SidecarClient.attach(
        process.stdout, process.stdin, session_root=sessions_root, client_name="attached"
    ) as client:
        assert client.process is None
        await client.create("/w", session_id="att")
        assert [s["sessionId"] for s in (await client.list(all=True))["sessions"]] == []  # nothing written yet
        assert (await client.get_tree("att"))["nodes"] == []
    assert client.closed
    assert await asyncio.wait_for(process.wait(), 10) == 0  # shutdown and exit were sent


async def test_close_is_polite_and_idempotent(command: list[str], sessions_root: Path):
    sent: list[Any] = []
    client = await SidecarClient.spawn(
        command=command, session_root=sessions_root, trace=lambda d, m: sent.append(m) if d == "send" else None
    )
    assert client.state == "initialized"
    assert await client.close() == 0
    assert [m["method"] for m in sent] == ["initialize", "initialized", "shutdown", "exit"]
    assert await client.close() == 0
    with pytest.raises(ConnectionClosed):
        await client.list()


async def test_a_wedged_sidecar_is_killed_after_the_timeout(command: list[str], sessions_root: Path):
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    assert client.process is not None
    os.kill(client.process.pid, signal.SIGSTOP)  # it will never answer shutdown
    started = time.monotonic()
    code = await client.close(timeout=0.5)
    assert code == -signal.SIGKILL
    assert time.monotonic() - started < 5


async def test_a_sidecar_that_ignores_end_of_input_is_killed(sessions_root: Path):
    # Not initialized, so close only ends stdin; this child never reads it.
    client = await SidecarClient.spawn(
        command=[sys.executable, "-c", "import time; time.sleep(60)"], initialize=False, close_timeout=0.3
    )
    assert await client.close() == -signal.SIGKILL


async def test_a_dying_sidecar_fails_the_calls_waiting_for_it(command: list[str], sessions_root: Path):
    asked = asyncio.Event()

    async def summarize(params: SummarizeParams) -> SummarizeResult:
        asked.set()
        await asyncio.sleep(60)
        return {"text": "never"}

    settings = {
        "compaction": {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300},
        "providers": {"default": "client"},
    }
    client = await SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings, summarize=summarize
    )
    try:
        await client.create("/w", session_id="d")
        await client.append("d", turns(6))
        waiting = asyncio.create_task(client.compact("d"))
        await asyncio.wait_for(asked.wait(), 10)
        assert client.process is not None
        client.process.kill()
        with pytest.raises(ConnectionClosed) as gone:
            await asyncio.wait_for(waiting, 10)
        assert gone.value.returncode == -signal.SIGKILL
        with pytest.raises(ConnectionClosed):
            await client.list()
    finally:
        assert await client.close() == -signal.SIGKILL


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to look for the child")
async def test_a_failed_initialize_raises_and_leaves_no_process(command: list[str], sessions_root: Path):
    opening = SidecarClient.spawn(
        command=command, root=sessions_root, settings={"compaction": {"contextWindow": "big"}}
    )
    with pytest.raises(InvalidParamsError) as bad:
        await opening
    assert "contextWindow" in bad.value.data["field"]
    assert processes_mentioning(str(sessions_root)) == []
    # The check can see a running sidecar:
    async with SidecarClient.spawn(command=command, root=sessions_root) as client:
        assert client.process is not None and processes_mentioning(str(sessions_root)) == [client.process.pid]


async def test_server_requests_the_client_does_not_handle_are_refused_and_others_answered(
    command: list[str], sessions_root: Path
):
    settings = {
        "compaction": {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300, "autoCompact": True}
    }
    # Refused: autoCompact still runs, without progress.
    notes: list[tuple[str, Any]] = []
    compacted: asyncio.Queue[Any] = asyncio.Queue()
    async with SidecarClient.spawn(
        command=command,
        session_root=sessions_root,
        settings=settings,
        on_notification=lambda method, params: notes.append((method, params)),
        on_did_compact=compacted.put_nowait,
    ) as client:
        await client.create("/w", session_id="r")
        await client.append("r", turns(10))
        await asyncio.wait_for(compacted.get(), 10)
        assert notes == []
    # Accepted through on_server_progress: the server reports the run on its own token.
    progress: list[tuple[Any, Any]] = []
    async with SidecarClient.spawn(
        command=command,
        session_root=sessions_root,
        settings=settings,
        on_server_progress=lambda token, value: progress.append((token, value)),
        on_notification=lambda method, params: notes.append((method, params)),
        on_did_compact=compacted.put_nowait,
    ) as client:
        await client.create("/w", session_id="s")
        await client.append("s", turns(10))
        await asyncio.wait_for(compacted.get(), 10)
        assert len({token for token, _ in progress}) == 1
        kinds = [value["kind"] for _, value in progress]
        assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
        assert notes == [] and client._server_tokens == set()
    # Or answered by a handler of one's own; the progress then reaches on_notification.
    tokens: list[Any] = []
    async with SidecarClient.spawn(
        command=command,
        session_root=sessions_root,
        settings=settings,
        handlers={"window/workDoneProgress/create": lambda params: tokens.append(params["token"])},
        on_notification=lambda method, params: notes.append((method, params)),
        on_did_compact=compacted.put_nowait,
    ) as client:
        await client.create("/w", session_id="t")
        await client.append("t", turns(10))
        await asyncio.wait_for(compacted.get(), 10)
        assert len(tokens) == 1
        kinds = [
            params["value"]["kind"]
            for method, params in notes
            if method == "$/progress" and params["token"] == tokens[0]
        ]
        assert kinds[0] == "begin" and kinds[-1] == "end"


async def test_a_sidecar_of_another_protocol_major_is_refused_with_both_versions(sessions_root: Path):
    # The real sidecar, told (test-only) to report protocol 2.0 in its initialize answer.
    env = {**os.environ, "SIDECAR_TEST_REPORT_PROTOCOL_VERSION": "2.0"}
    with pytest.raises(ProtocolVersionError) as caught:
        await SidecarClient.spawn(command=sidecar_command(), session_root=sessions_root, env=env)
    assert caught.value.server_version == "2.0" and caught.value.client_version == "1.0"
    assert "protocol 2.0" in str(caught.value) and "this client speaks 1.0" in str(caught.value)


async def test_a_newer_minor_of_the_same_major_is_accepted(sessions_root: Path):
    env = {**os.environ, "SIDECAR_TEST_REPORT_PROTOCOL_VERSION": "1.7"}
    async with SidecarClient.spawn(command=sidecar_command(), session_root=sessions_root, env=env) as client:
        created = await client.create(str(sessions_root))
        assert created["sessionId"]
