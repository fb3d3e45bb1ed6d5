"""The Claude Agent SDK store against the SDK's own InMemorySessionStore, side by side in one run.

    python bench/claude_store.py [--entries 1000] [--rounds 5]

- ``conformance``: the SDK's ``run_session_store_conformance`` (14 contracts) against each store,
  ours with a sidecar spawned per contract (the suite asks for a fresh store each time: the spawns
  are most of it), and on one sidecar with each contract's project keys given a prefix of its own
  (the calls alone);
- ``append N``: one ``append`` of N Claude Code transcript lines (a conversation: prompts, assistant
  lines of one block each, tool calls and results), on a fresh key;
- ``append N, by turn``: the same lines, one ``append`` a turn (as the SDK flushes, ``batched``);
- ``load N``: ``load`` of that key.

Medians over the rounds, milliseconds, and the ratio ours / theirs. Needs the SDK
(``pip install -e '.[claude-agent-sdk]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "clients" / "python"))

from claude_agent_sdk import InMemorySessionStore  # noqa: E402
from claude_agent_sdk.testing import run_session_store_conformance  # noqa: E402
from session_sidecar_client import SidecarClient  # noqa: E402
from session_sidecar_client.adapters.claude_agent_sdk import SidecarSessionStore  # noqa: E402

COMMAND = [sys.executable, "-m", "sidecar"]


def transcript(count: int, session: str) -> list[list[dict[str, Any]]]:
    """``count`` lines as Claude Code writes them, cut into turns."""
    turns: list[list[dict[str, Any]]] = []
    parent: str | None = None
    n = 0
    while sum(map(len, turns)) < count:
        n += 1
        turn: list[dict[str, Any]] = []

        def line(kind: str, message: dict[str, Any], **extra: Any) -> None:
            nonlocal parent
            uid = f"{session}-{n}-{len(turn)}"
            turn.append(
                {
                    "type": kind,
                    "uuid": uid,
                    "parentUuid": parent,
                    "sessionId": session,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "cwd": "/work/project",
                    "isSidechain": False,
                    "message": message,
                    **extra,
                }
            )
            parent = uid

        line("user", {"role": "user", "content": f"step {n}: look at file {n}.py and fix the bug"})
        msg = {"id": f"msg_{n}a", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use"}
        line("assistant", {**msg, "content": [{"type": "text", "text": f"Reading {n}.py first."}]})
        line(
            "assistant",
            {**msg, "content": [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"path": f"{n}.py"}}]},
        )
        line(
            "user",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x = 1\n" * 20}]},
            toolUseResult={"type": "text", "file": {"filePath": f"{n}.py"}},
        )
        done = {"id": f"msg_{n}b", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "end_turn"}
        line("assistant", {**done, "content": [{"type": "text", "text": f"Fixed {n}.py: the bug was an off-by-one."}]})
        turns.append(turn)
    return turns


class Scoped:
    """A store whose project keys carry a prefix of its own: the suite's contracts isolated on one sidecar."""

    def __init__(self, store: SidecarSessionStore, scope: str) -> None:
        self.store, self.scope = store, scope

    def _key(self, key: Any) -> Any:
        return {**key, "project_key": f"{self.scope}:{key['project_key']}"}

    async def append(self, key: Any, entries: Any) -> None:
        await self.store.append(self._key(key), entries)

    async def load(self, key: Any) -> Any:
        return await self.store.load(self._key(key))

    async def list_sessions(self, project_key: str) -> Any:
        return await self.store.list_sessions(f"{self.scope}:{project_key}")

    async def list_session_summaries(self, project_key: str) -> Any:
        return await self.store.list_session_summaries(f"{self.scope}:{project_key}")

    async def delete(self, key: Any) -> None:
        await self.store.delete(self._key(key))

    async def list_subkeys(self, key: Any) -> Any:
        return await self.store.list_subkeys(self._key(key))


async def timed(job: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await job()
    return (time.perf_counter() - start) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: dict[str, tuple[list[float], list[float]]] = {}

    def note(name: str, ours: float, theirs: float) -> None:
        rows.setdefault(name, ([], []))
        rows[name][0].append(ours)
        rows[name][1].append(theirs)

    with tempfile.TemporaryDirectory() as tmp:
        spawned: list[SidecarClient] = []
        made = [0]

        async def fresh_sidecar() -> SidecarSessionStore:
            made[0] += 1
            root = Path(tmp) / f"conf{made[0]}"
            root.mkdir()
            client = await SidecarClient.spawn(command=COMMAND, session_root=root)
            spawned.append(client)
            return SidecarSessionStore(client=client)

        for _ in range(args.rounds):
            ours = await timed(lambda: run_session_store_conformance(fresh_sidecar))
            theirs = await timed(lambda: run_session_store_conformance(InMemorySessionStore))
            note("conformance (a sidecar spawned per contract)", ours, theirs)
            for client in spawned:
                await client.close()
            spawned.clear()

        root = Path(tmp) / "root"
        root.mkdir()
        client = await SidecarClient.spawn(command=COMMAND, session_root=root)
        try:
            store = SidecarSessionStore(client=client)
            scopes = [0]

            def scoped() -> Any:
                scopes[0] += 1
                return Scoped(store, f"scope{scopes[0]}")

            for _ in range(args.rounds):
                ours = await timed(lambda: run_session_store_conformance(scoped))
                theirs = await timed(lambda: run_session_store_conformance(InMemorySessionStore))
                note("conformance (one sidecar, a project key per contract)", ours, theirs)
            for round_ in range(args.rounds):
                reference = InMemorySessionStore()
                key: Any = {"project_key": "bench", "session_id": f"whole-{round_}"}
                turns = transcript(args.entries, key["session_id"])
                lines = [line for turn in turns for line in turn][: args.entries]
                ours = await timed(lambda: store.append(key, lines))
                theirs = await timed(lambda: reference.append(key, lines))
                note(f"append {len(lines)} (one call)", ours, theirs)
                ours = await timed(lambda: store.load(key))
                theirs = await timed(lambda: reference.load(key))
                note(f"load {len(lines)}", ours, theirs)
                assert await store.load(key) == await reference.load(key) == lines
                by_turn: Any = {"project_key": "bench", "session_id": f"turns-{round_}"}
                turns = transcript(args.entries, by_turn["session_id"])

                async def each(target: Any) -> None:
                    for turn in turns:
                        await target.append(by_turn, turn)

                ours = await timed(lambda: each(store))
                theirs = await timed(lambda: each(reference))
                note(f"append {sum(map(len, turns))}, by turn ({len(turns)} calls)", ours, theirs)
        finally:
            await client.close()

    print(f"{'':55} {'sidecar ms':>11} {'in-memory ms':>13} {'ratio':>8}")
    for name, (ours_ms, theirs_ms) in rows.items():
        a, b = statistics.median(ours_ms), statistics.median(theirs_ms)
        print(f"{name:55} {a:11.2f} {b:13.3f} {a / b if b else float('inf'):8.0f}x")


if __name__ == "__main__":
    asyncio.run(main())
