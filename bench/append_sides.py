"""Two sidecars side by side: this checkout's and another's (``--other``, e.g. a worktree of main), spawned
together and called in turn, so both meet the same machine (a shared machine moves a run's figures by
more than a change of 1 ms; taking turns keeps that out of the comparison).

    python bench/append_sides.py --other /path/to/main-worktree [--calls 100]

Each call: ``session/append`` of 1,000 entries the OpenAI Agents adapter makes of bench/openai_agents.py's
conversation, to a new session, then an untimed ``session/open`` (what the sidecar does after answering),
then 5 turns of 3 entries. Medians in milliseconds, as the client waits for each answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "clients" / "python"))

from openai_agents import conversation  # noqa: E402
from session_sidecar_client.adapters.openai_agents.items import to_entry  # noqa: E402


def adapter_entries(count: int) -> list[dict[str, Any]]:
    names: dict[str, str] = {}
    entries: list[dict[str, Any]] = []
    for item in conversation(count):
        if item.get("type") == "function_call":
            names[item["call_id"]] = item["name"]
        entries.append(dict(to_entry(item, names)))
    return entries


class Sidecar:
    """One sidecar spoken to in JSONL framing, its package taken from ``source`` (None: this checkout's)."""

    def __init__(self, name: str, source: str | None) -> None:
        self.name, self.source, self.next_id = name, source, 0

    async def start(self, root: str) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if self.source is not None:
            env["PYTHONPATH"] = self.source
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sidecar", "serve", "--jsonl", stdin=-1, stdout=-1, limit=1 << 26, env=env
        )
        await self.call("initialize", {"clientInfo": {"name": "bench"}, "protocolVersion": "1.0", "sessionRoot": root})

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        while True:
            message = json.loads(await self.process.stdout.readline())
            if message.get("id") == self.next_id:
                assert "result" in message, message
                return message["result"]

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", required=True, help="the checkout whose sidecar is the baseline")
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    entries = adapter_entries(1000)
    sides = [Sidecar("this", None), Sidecar("other", args.other)]
    large: dict[str, list[float]] = {side.name: [] for side in sides}
    turns: dict[str, list[float]] = {side.name: [] for side in sides}
    warmup = 5
    with tempfile.TemporaryDirectory() as temp:
        for side in sides:
            os.mkdir(f"{temp}/{side.name}")
            await side.start(f"{temp}/{side.name}")
        for call in range(args.calls + warmup):
            for side in sides if call % 2 else sides[::-1]:  # (neither always first)
                session = f"s{call}"
                await side.call("session/create", {"cwd": "/bench", "sessionId": session})
                start = time.perf_counter()
                await side.call("session/append", {"sessionId": session, "entries": entries})
                took = (time.perf_counter() - start) * 1000
                await side.call("session/open", {"sessionId": session})
                if call >= warmup:
                    large[side.name].append(took)
                for _ in range(5):
                    start = time.perf_counter()
                    await side.call("session/append", {"sessionId": session, "entries": entries[:3]})
                    if call >= warmup:
                        turns[side.name].append((time.perf_counter() - start) * 1000)
        for side in sides:
            await side.stop()
    median = statistics.median
    print(f"{'':14} {'this':>8} {'other':>8} {'this - other':>13}   (median ms of {args.calls})")
    for name, rows in (("append 1,000", large), ("turn of 3", turns)):
        mine, theirs = median(rows["this"]), median(rows["other"])
        print(f"{name:14} {mine:8.2f} {theirs:8.2f} {mine - theirs:+13.2f}")


if __name__ == "__main__":
    asyncio.run(main())
