"""A 50 MB tool output sent to a real sidecar: what is kept is cut to the size rule, on disk and in the context."""

from __future__ import annotations

import json
from pathlib import Path

from sidecar.store.payload import MAX_CHARS, TRUNCATION_NOTICE

from .harness import RawServer, assistant, tool_result, user


def peak_rss_kib(pid: int) -> int:
    """VmHWM: the most resident memory the process has had."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_a_50_mb_tool_output_is_stored_and_shown_cut(sessions_root: Path):
    server = await RawServer.start()
    try:
        await server.initialize(sessions_root)
        created = (await server.request("session/create", {"cwd": "/work/big"}))["result"]
        sid = created["sessionId"]
        assert "result" in await server.request(
            "session/append", {"sessionId": sid, "entries": [user("run it"), assistant("ok")]}
        )
        before = peak_rss_kib(server.process.pid)
        output = ("0123456789abcdef" * 64 + "\n") * 49_000  # 50,225,000 characters
        answer = await server.request(
            "session/append",
            {"sessionId": sid, "entries": [tool_result("c1", output)]},
        )
        assert "result" in answer, answer
        after = peak_rss_kib(server.process.pid)
        print(
            f"\nsidecar peak RSS: {before / 1024:.0f} MiB before, {after / 1024:.0f} MiB after a {len(output) / 1e6:.1f} MB append"
        )
        path = Path(
            created["path"]
        )  # a file below the root, or its place in PostgreSQL (read as export-root writes it)
        assert path.name.endswith(f"_{sid}.jsonl")
        last_line = path.read_bytes().splitlines()[-1]
        assert len(last_line) < MAX_CHARS + 1000
        stored = json.loads(last_line)["message"]["content"][0]["text"]
        assert len(stored) == MAX_CHARS and stored.endswith(TRUNCATION_NOTICE)
        assert output.startswith(stored[: -len(TRUNCATION_NOTICE)])
        ctx = await server.request("session/buildContext", {"sessionId": sid})
        assert ctx["result"]["messages"][-1]["content"][0]["text"] == stored
    finally:
        await server.stop()
